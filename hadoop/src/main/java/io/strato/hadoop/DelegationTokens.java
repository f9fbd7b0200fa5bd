package io.strato.hadoop;

import io.grpc.Status;
import io.strato.client.MetaClient;
import io.strato.client.MetaException;
import io.strato.client.Security;
import io.strato.proto.v1.CancelDelegationTokenRequest;
import io.strato.proto.v1.GetDelegationTokenRequest;
import io.strato.proto.v1.GetDelegationTokenResponse;
import io.strato.proto.v1.RenewDelegationTokenRequest;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.HadoopKerberosName;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.security.token.TokenIdentifier;

/**
 * Delegation tokens between Hadoop and meta (docs/hadoop.md, "Delegation
 * tokens"). A Hadoop Token of kind STRATO_DELEGATION_TOKEN carries meta's
 * identifier and, as its password, the token's secret: the bearer token
 * meta takes is strato1.dt&lt;sequence number&gt;.&lt;the secret, base64url&gt;. Its
 * service is "strato:" and the logical cluster's name, or the meta
 * addresses joined by commas (getCanonicalServiceName), from which the
 * renewer finds meta again.
 */
final class DelegationTokens {
  /** The prefix of a strato token service. */
  static final String SERVICE_PREFIX = "strato:";

  private DelegationTokens() {}

  /** The service of a file system of logical cluster name (null: none) at addrs. */
  static String service(String cluster, List<String> addrs) {
    return SERVICE_PREFIX + (cluster != null ? cluster : String.join(",", addrs));
  }

  /** The bearer token meta takes for a Hadoop token. */
  static String bearer(Token<? extends TokenIdentifier> token) throws IOException {
    StratoDelegationTokenIdentifier id = new StratoDelegationTokenIdentifier();
    id.readFields(new DataInputStream(new ByteArrayInputStream(token.getIdentifier())));
    return "strato1.dt" + id.getSequenceNumber() + "."
        + Base64.getUrlEncoder().withoutPadding().encodeToString(token.getPassword());
  }

  /** The bearer token of the strato token of service in creds, or null. */
  static String fromCredentials(Credentials creds, String service) throws IOException {
    Text svc = new Text(service);
    for (Token<? extends TokenIdentifier> t : creds.getAllTokens()) {
      if (StratoDelegationTokenIdentifier.KIND.equals(t.getKind()) && svc.equals(t.getService())) {
        return bearer(t);
      }
    }
    return null;
  }

  /**
   * The user name of a renewer given as a Kerberos principal
   * (yarn/host@REALM: TokenCache passes yarn.resourcemanager.principal),
   * mapped by Hadoop's auth_to_local rules (hadoop.security.auth_to_local)
   * as HDFS's AbstractDelegationTokenIdentifier maps it; a principal no
   * rule maps, or a plain name, as given (meta takes the first component).
   */
  static String renewerName(String renewer) {
    if (renewer == null || renewer.indexOf('/') < 0 && renewer.indexOf('@') < 0) {
      return renewer == null ? "" : renewer;
    }
    try {
      UserGroupInformation.isSecurityEnabled(); // loads the rules of Hadoop's configuration
      return new HadoopKerberosName(renewer).getShortName();
    } catch (IOException | IllegalArgumentException e) {
      return renewer;
    }
  }

  /** Gets a delegation token from meta; null when meta runs without authentication. */
  static Token<StratoDelegationTokenIdentifier> get(MetaClient meta, String renewer, String service) throws IOException {
    GetDelegationTokenResponse r;
    String name = renewerName(renewer);
    try {
      r = meta.admin("get delegation token", false, s -> s.getDelegationToken(
          GetDelegationTokenRequest.newBuilder().setRenewer(name).build()));
    } catch (MetaException e) {
      if (e.code() == Status.Code.FAILED_PRECONDITION) {
        return null; // an open cluster (--auth none): no token needed, as HDFS without security
      }
      throw e;
    }
    return new Token<>(r.getIdentifier().toByteArray(), r.getPassword().toByteArray(),
        StratoDelegationTokenIdentifier.KIND, new Text(service));
  }

  /** Renews token at meta (its renewer's credential in conf); returns the new expiry (ms). */
  static long renew(Token<?> token, Configuration conf) throws IOException {
    String bearer = bearer(token);
    try (MetaClient meta = metaOf(token.getService().toString(), conf)) {
      return meta.admin("renew delegation token", true, s -> s.renewDelegationToken(
          RenewDelegationTokenRequest.newBuilder().setToken(bearer).build())).getExpiresUnixMs();
    }
  }

  /** Cancels token at meta (its owner's or renewer's credential in conf). */
  static void cancel(Token<?> token, Configuration conf) throws IOException {
    String bearer = bearer(token);
    try (MetaClient meta = metaOf(token.getService().toString(), conf)) {
      meta.admin("cancel delegation token", true, s -> s.cancelDelegationToken(
          CancelDelegationTokenRequest.newBuilder().setToken(bearer).build()));
    }
  }

  /**
   * A meta client for a token's service, presenting the credential conf
   * gives (fs.strato.token, then $STRATO_TOKEN and the login file), never a
   * delegation token: renewing needs a real credential.
   */
  private static MetaClient metaOf(String service, Configuration conf) throws IOException {
    if (!service.startsWith(SERVICE_PREFIX)) {
      throw new IOException("strato: " + service + " is not a strato token service (" + SERVICE_PREFIX + "CLUSTER or "
          + SERVICE_PREFIX + "HOST:PORT,...)");
    }
    String rest = service.substring(SERVICE_PREFIX.length());
    List<String> addrs = new ArrayList<>();
    Security security;
    String[] named = conf.getTrimmedStrings(StratoFileSystem.clusterKey(rest, "meta.addresses"));
    if (named.length > 0) {
      addrs.addAll(List.of(named));
      security = StratoFileSystem.security(conf, rest);
    } else {
      for (String a : rest.split(",")) {
        if (!a.isBlank()) {
          addrs.add(a.strip());
        }
      }
      security = StratoFileSystem.security(conf);
    }
    return new MetaClient(addrs, conf.getLong(StratoFileSystem.META_ATTEMPT_TIMEOUT, 10_000),
        conf.getLong(StratoFileSystem.META_RETRY, 60_000), security);
  }
}
