package io.strato.client;

import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * What a client proves and checks (docs/security.md): the cluster CA that
 * meta's and the datanodes' certificates must chain to (TLS 1.3 on both the
 * gRPC API and the data protocol), and the token sent to meta with every
 * call. Both are found the way the Go client and the CLI find them.
 */
public final class Security {
  /** The CA file's environment variable, as the CLI's --tls-ca. */
  public static final String TLS_CA_ENV = "STRATO_TLS_CA";
  /** The token's environment variable, as the CLI's --token. */
  public static final String TOKEN_ENV = "STRATO_TOKEN";

  private final String caPath;
  private final SSLContext ssl;
  private final SslContext grpcSsl;
  private final String token;

  private Security(String caPath, SSLContext ssl, SslContext grpcSsl, String token) {
    this.caPath = caPath;
    this.ssl = ssl;
    this.grpcSsl = grpcSsl;
    this.token = token;
  }

  /** No TLS, no token: a cluster in strato dev's default mode. */
  public static Security none() {
    return new Security("", null, null, "");
  }

  /**
   * Builds the client's security from a CA file (PEM; "" for plain TCP) and
   * a token ("" for none).
   */
  public static Security of(String caPath, String token) throws IOException {
    token = token == null ? "" : token.strip();
    if (caPath == null || caPath.isEmpty()) {
      return new Security("", null, null, token);
    }
    try {
      KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
      trust.load(null, null);
      Collection<? extends Certificate> certs;
      try (InputStream in = Files.newInputStream(Paths.get(caPath))) {
        certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
      }
      if (certs.isEmpty()) {
        throw new IOException("strato: TLS CA file " + caPath + " holds no certificate");
      }
      int i = 0;
      for (Certificate c : certs) {
        trust.setCertificateEntry("strato-ca-" + i++, c);
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext ssl = SSLContext.getInstance("TLSv1.3");
      ssl.init(null, tmf.getTrustManagers(), null);
      SslContext grpc = GrpcSslContexts.forClient().trustManager(new File(caPath)).protocols("TLSv1.3").build();
      return new Security(caPath, ssl, grpc, token);
    } catch (GeneralSecurityException e) {
      throw new IOException("strato: reading TLS CA file " + caPath + ": " + e.getMessage(), e);
    } catch (IOException e) {
      throw new IOException("strato: reading TLS CA file " + caPath + ": " + e.getMessage(), e);
    }
  }

  /**
   * The token to send: the one given, else $STRATO_TOKEN, else the file
   * `strato login` writes ($XDG_CONFIG_HOME/strato/token, or
   * ~/.config/strato/token); "" when there is none.
   */
  public static String findToken(String given, Map<String, String> env) throws IOException {
    if (given != null && !given.isBlank()) {
      return given.strip();
    }
    String t = env.getOrDefault(TOKEN_ENV, "");
    if (!t.isBlank()) {
      return t.strip();
    }
    Path f = tokenFile(env);
    if (f != null && Files.isRegularFile(f)) {
      return Files.readString(f, StandardCharsets.UTF_8).strip();
    }
    return "";
  }

  /** Where `strato login` keeps the token, or null without a home directory. */
  static Path tokenFile(Map<String, String> env) {
    String xdg = env.getOrDefault("XDG_CONFIG_HOME", "");
    if (!xdg.isEmpty()) {
      return Paths.get(xdg, "strato", "token");
    }
    String home = env.getOrDefault("HOME", System.getProperty("user.home", ""));
    return home.isEmpty() ? null : Paths.get(home, ".config", "strato", "token");
  }

  public boolean tls() {
    return ssl != null;
  }

  /** The CA file ("" without TLS). */
  public String caPath() {
    return caPath;
  }

  /** For the data protocol's sockets; null without TLS. */
  public SSLContext sslContext() {
    return ssl;
  }

  /** For meta's gRPC channels; null without TLS. */
  SslContext grpcSslContext() {
    return grpcSsl;
  }

  /** The token ("" for none). */
  public String token() {
    return token;
  }
}
