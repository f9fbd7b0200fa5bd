package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/metadata"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Signing in (Options.Login): a meta that authenticates clients (--auth
// token) serves its console to people who present a token of their own.
// The console keeps it in a cookie (HttpOnly, SameSite=Strict, Secure over
// HTTPS) and calls meta with it, so each person sees what meta lets them
// see: an administrator every page, another user the namespace they may
// read (the cluster pages answer 403). The console itself holds no
// credential that a visitor could borrow.

const (
	tokenCookie   = "strato_token"
	authorization = "authorization"
)

// visitor is who signed in, carried in a request's context.
type visitor struct{ user string }

type visitorKey struct{}

// withVisitor checks a request's cookie when the console asks for a
// sign-in: with none (or a token meta no longer takes), pages redirect to
// /login and the APIs answer 401. A request that passes goes on with the
// token as outgoing gRPC metadata in its context, which every meta call of
// the page inherits.
func (c *Console) withVisitor(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.opts.Login || r.URL.Path == "/login" || strings.HasPrefix(r.URL.Path, "/static/") {
			next.ServeHTTP(w, r)
			return
		}
		ck, err := r.Cookie(tokenCookie)
		if err != nil || ck.Value == "" {
			c.signIn(w, r)
			return
		}
		ctx := metadata.AppendToOutgoingContext(r.Context(), authorization, "Bearer "+ck.Value)
		who, err := c.whoAmI(ctx)
		if err != nil {
			// Expired, revoked or unknown: sign in again.
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Path: "/", MaxAge: -1})
			c.signIn(w, r)
			return
		}
		ctx = context.WithValue(ctx, visitorKey{}, &visitor{user: who.GetUser()})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// signIn sends a browser to the sign-in page (back here afterwards) and
// an API caller a 401.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/download/") {
		http.Error(w, "sign in at /login with a token (strato admin token issue)", http.StatusUnauthorized)
		return
	}
	http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
}

// whoAmI asks meta who ctx's token names.
func (c *Console) whoAmI(ctx context.Context) (*stratov1.WhoAmIResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var who *stratov1.WhoAmIResponse
	err := c.admin(ctx, func(ctx context.Context, a stratov1.AdminServiceClient) error {
		var err error
		who, err = a.WhoAmI(ctx, &stratov1.WhoAmIRequest{})
		return err
	})
	return who, err
}

type loginPage struct {
	Next    string
	Message string
}

// loginForm serves the sign-in page.
func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "login", "Sign in", loginPage{Next: safeNext(r.URL.Query().Get("next"))})
}

// login takes a token from the form, checks it with meta and keeps it in
// the cookie.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	tok := strings.TrimSpace(r.PostFormValue("token"))
	next := safeNext(r.PostFormValue("next"))
	if tok == "" {
		c.render(w, r, http.StatusBadRequest, "login", "Sign in", loginPage{Next: next, Message: "Paste a token (strato admin token issue, or the one strato login keeps)."})
		return
	}
	who, err := c.whoAmI(metadata.AppendToOutgoingContext(r.Context(), authorization, "Bearer "+tok))
	if err != nil {
		c.render(w, r, http.StatusUnauthorized, "login", "Sign in", loginPage{Next: next, Message: errorText(err)})
		return
	}
	ck := &http.Cookie{Name: tokenCookie, Value: tok, Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode}
	if ms := who.GetTokenExpiresUnixMs(); ms > 0 {
		ck.Expires = time.UnixMilli(ms)
	}
	http.SetCookie(w, ck)
	c.opts.Logger.Info("web: signed in", "user", who.GetUser(), "token", who.GetTokenId())
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout forgets the cookie.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Path: "/", MaxAge: -1, HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a redirect inside the console: a path, never another
// site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, `\`) {
		return "/"
	}
	return next
}

// visitorName is who signed in, "" without sign-in.
func visitorName(ctx context.Context) string {
	if v, ok := ctx.Value(visitorKey{}).(*visitor); ok {
		return v.user
	}
	return ""
}

// hasAuthorization: ctx already carries a token for meta.
func hasAuthorization(ctx context.Context) bool {
	md, ok := metadata.FromOutgoingContext(ctx)
	return ok && len(md.Get(authorization)) > 0
}
