package io.strato.hadoop;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.token.delegation.AbstractDelegationTokenIdentifier;

/**
 * The identifier of a strato delegation token (kind STRATO_DELEGATION_TOKEN;
 * docs/decisions/0082-delegation-tokens.md): owner, renewer, real user,
 * issue and max dates, sequence number and the ID of the meta key that
 * signed it, in the encoding of AbstractDelegationTokenIdentifier, which
 * meta writes byte for byte. Hadoop finds it by its kind through
 * META-INF/services/org.apache.hadoop.security.token.TokenIdentifier, so
 * that dtutil print, YARN and Token.decodeIdentifier read it.
 */
public class StratoDelegationTokenIdentifier extends AbstractDelegationTokenIdentifier {
  /** The kind of a strato delegation token, as meta names it (meta.DelegationTokenKind). */
  public static final Text KIND = new Text("STRATO_DELEGATION_TOKEN");

  public StratoDelegationTokenIdentifier() {
    super();
  }

  public StratoDelegationTokenIdentifier(Text owner, Text renewer, Text realUser) {
    super(owner, renewer, realUser);
  }

  @Override
  public Text getKind() {
    return KIND;
  }
}
