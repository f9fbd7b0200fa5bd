package io.strato.hadoop;

import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.token.DtFetcher;
import org.apache.hadoop.security.token.Token;

/**
 * Fetches strato delegation tokens for `hadoop dtutil get strato://...`,
 * found through META-INF/services/org.apache.hadoop.security.token.DtFetcher.
 * A token is always required: meta's authentication does not depend on
 * Hadoop's (Kerberos) security.
 */
public class StratoDtFetcher implements DtFetcher {
  private static final Text SERVICE = new Text(StratoFileSystem.SCHEME);

  @Override
  public Text getServiceName() {
    return SERVICE;
  }

  @Override
  public boolean isTokenRequired() {
    return true;
  }

  @Override
  public Token<?> addDelegationTokens(Configuration conf, Credentials creds, String renewer, String url) throws Exception {
    if (!url.startsWith(StratoFileSystem.SCHEME + "://")) {
      url = StratoFileSystem.SCHEME + "://" + url;
    }
    try (FileSystem fs = FileSystem.newInstance(URI.create(url), conf)) {
      Token<?> token = fs.getDelegationToken(renewer);
      if (token == null) {
        throw new IOException("strato: " + url + " runs without authentication: there is no delegation token to get");
      }
      creds.addToken(token.getService(), token);
      return token;
    }
  }
}
