package web_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/web"
)

// TestConsoleLogin: with a meta that authenticates clients, the console
// serves nothing before a visitor signs in with a token of their own;
// then it calls meta with that token, so an administrator sees the cluster
// pages and another user is refused them; a revoked token sends the
// visitor back to the sign-in page, and signing out forgets it.
func TestConsoleLogin(t *testing.T) {
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), Auth: true, Datanodes: 1,
		HeartbeatInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	admin, err := c.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	adminTok, err := c.AdminToken()
	require.NoError(t, err)
	_, err = admin.CreateUser(t.Context(), "bob", false, nil)
	require.NoError(t, err)
	bobTok, bobInfo, err := admin.IssueToken(t.Context(), "bob", time.Hour)
	require.NoError(t, err)

	con, err := web.New(web.Options{Meta: c.MetaAddr(), Login: true, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = con.Close() })
	srv := httptest.NewServer(con)
	t.Cleanup(srv.Close)

	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	browser := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, CheckRedirect: noRedirect, Timeout: 20 * time.Second}
	}
	get := func(b *http.Client, path string) (int, string, http.Header) {
		t.Helper()
		resp, err := b.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), resp.Header
	}
	type answer struct {
		code    int
		body    string
		header  http.Header
		cookies []*http.Cookie
	}
	signIn := func(b *http.Client, tok, next string) answer {
		t.Helper()
		resp, err := b.PostForm(srv.URL+"/login", url.Values{"token": {tok}, "next": {next}})
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return answer{resp.StatusCode, string(body), resp.Header, resp.Cookies()}
	}

	// Nobody signed in: pages redirect, APIs and downloads answer 401.
	anon := browser()
	code, _, h := get(anon, "/datanodes?limit=5")
	require.Equal(t, http.StatusSeeOther, code)
	require.Equal(t, "/login?next="+url.QueryEscape("/datanodes?limit=5"), h.Get("Location"))
	for _, p := range []string{"/api/overview", "/api/rates", "/download/v/b/k"} {
		code, _, _ = get(anon, p)
		require.Equal(t, http.StatusUnauthorized, code, p)
	}
	code, body, _ := get(anon, "/login")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `name="token"`)

	// A wrong token is refused on the form, and sets no cookie.
	a := signIn(anon, "strato1.0000000000000000.bad", "/")
	require.Equal(t, http.StatusUnauthorized, a.code)
	require.Contains(t, a.body, "unknown token")
	require.Empty(t, a.cookies)
	require.Equal(t, http.StatusBadRequest, signIn(anon, "", "/").code)

	// The administrator signs in and is sent back where they were going
	// (never to another site).
	adm := browser()
	a = signIn(adm, adminTok, "/datanodes?limit=5")
	require.Equal(t, http.StatusSeeOther, a.code)
	require.Equal(t, "/datanodes?limit=5", a.header.Get("Location"))
	ck := a.cookies
	require.Len(t, ck, 1)
	require.True(t, ck[0].HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck[0].SameSite)
	code, body, _ = get(adm, "/datanodes")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, c.DatanodeAddrs()[0])
	require.Contains(t, body, `id="user"`)
	code, _, _ = get(adm, "/api/overview")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "/", signIn(browser(), adminTok, "//evil.example/").header.Get("Location"))

	// Bob is no administrator: meta refuses him the cluster pages.
	bob := browser()
	require.Equal(t, http.StatusSeeOther, signIn(bob, bobTok, "/").code)
	code, body, _ = get(bob, "/datanodes")
	require.Equal(t, http.StatusForbidden, code, body)
	require.Contains(t, body, "bob")

	// Revoked: back to the sign-in page.
	require.NoError(t, admin.RevokeToken(t.Context(), bobInfo.GetId()))
	require.Eventually(t, func() bool {
		code, _, h := get(bob, "/datanodes")
		return code == http.StatusSeeOther && strings.HasPrefix(h.Get("Location"), "/login")
	}, 10*time.Second, 50*time.Millisecond)

	// Signing out forgets the cookie.
	resp, err := adm.PostForm(srv.URL+"/logout", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	code, _, _ = get(adm, "/datanodes")
	require.Equal(t, http.StatusSeeOther, code)
}
