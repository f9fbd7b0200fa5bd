package org.apache.hadoop.mapreduce.security;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.Credentials;

/**
 * TokenCache.obtainTokensForNamenodes without its first line, which returns
 * at once unless Hadoop's own security (Kerberos) is on: a JVM without a
 * KDC cannot turn it on, and strato's tokens do not depend on it. The rest
 * is what a job's submission runs (the renewer from
 * yarn.resourcemanager.principal, each path's file system asked for its
 * tokens, keyed by its canonical service).
 */
public final class TokenCacheAccess {
  private TokenCacheAccess() {}

  public static void obtainTokensForNamenodes(Credentials creds, Path[] paths, Configuration conf) throws IOException {
    TokenCache.obtainTokensForNamenodesInternal(creds, paths, conf);
  }
}
