package io.strato.hadoop;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.security.token.TokenRenewer;

/**
 * Renews and cancels strato delegation tokens for Token.renew and
 * Token.cancel (YARN's resource manager, dtutil renew and cancel), found
 * through META-INF/services/org.apache.hadoop.security.token.TokenRenewer.
 * The caller's credential comes from conf (fs.strato.token, or the
 * cluster's, $STRATO_TOKEN, the login file): meta lets only the token's
 * renewer renew it, and its owner or renewer cancel it.
 */
public class StratoTokenRenewer extends TokenRenewer {
  @Override
  public boolean handleKind(Text kind) {
    return StratoDelegationTokenIdentifier.KIND.equals(kind);
  }

  @Override
  public boolean isManaged(Token<?> token) {
    return true;
  }

  @Override
  public long renew(Token<?> token, Configuration conf) throws IOException {
    return DelegationTokens.renew(token, conf);
  }

  @Override
  public void cancel(Token<?> token, Configuration conf) throws IOException {
    DelegationTokens.cancel(token, conf);
  }
}
