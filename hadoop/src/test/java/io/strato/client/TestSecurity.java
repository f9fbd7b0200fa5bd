package io.strato.client;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.Test;

/** Where the connector finds its token and CA, in the Go client's order. */
public class TestSecurity {
  @Test
  public void tokenOrder() throws Exception {
    Path home = Files.createTempDirectory("strato-home");
    Path xdg = Files.createTempDirectory("strato-xdg");
    Files.createDirectories(home.resolve(".config/strato"));
    Files.writeString(home.resolve(".config/strato/token"), "from-home\n", StandardCharsets.UTF_8);
    Files.createDirectories(xdg.resolve("strato"));
    Files.writeString(xdg.resolve("strato/token"), "from-xdg\n", StandardCharsets.UTF_8);

    Map<String, String> env = Map.of("HOME", home.toString(), "XDG_CONFIG_HOME", xdg.toString(),
        "STRATO_TOKEN", " from-env ");
    assertEquals("given", Security.findToken(" given ", env));
    assertEquals("from-env", Security.findToken("", env));
    assertEquals("from-xdg", Security.findToken(null,
        Map.of("HOME", home.toString(), "XDG_CONFIG_HOME", xdg.toString())));
    assertEquals("from-home", Security.findToken("", Map.of("HOME", home.toString())));
    assertEquals("", Security.findToken("", Map.of("HOME", Files.createTempDirectory("empty").toString())));
  }

  @Test
  public void noCAIsPlainTCP() throws Exception {
    Security s = Security.of("", "t");
    assertFalse(s.tls());
    assertEquals("t", s.token());
    assertEquals(null, s.sslContext());
  }

  @Test
  public void badCAFileIsAClearError() throws Exception {
    Path f = Files.createTempFile("not-a-ca", ".crt");
    Files.writeString(f, "hello", StandardCharsets.UTF_8);
    for (String p : new String[] {f.toString(), f + ".missing"}) {
      try {
        Security.of(p, "");
        fail("accepted " + p);
      } catch (IOException e) {
        assertTrue(e.getMessage(), e.getMessage().contains("TLS CA file " + p));
      }
    }
  }
}
