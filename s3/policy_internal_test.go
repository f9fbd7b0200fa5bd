package s3

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// parsePolicy refuses what AWS refuses, with AWS's messages, and takes
// what it takes.
func TestParsePolicy(t *testing.T) {
	known := func(n string) bool { return n == "alice" || n == "AKIDBOB" }
	doc := func(effect, principal, action, resource, cond string) string {
		s := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":%q,"Principal":%s,"Action":%s,"Resource":%s`, effect, principal, action, resource)
		if cond != "" {
			s += `,"Condition":` + cond
		}
		return s + "}]}"
	}
	obj, bkt := `"arn:aws:s3:::b/*"`, `"arn:aws:s3:::b"`
	for _, c := range []struct {
		doc, want string // want: "" accepted
	}{
		{` {"Statement":[]}`, "Policies must be valid JSON and the first byte must be '{'"},
		{`{"Statement":[}`, "This policy contains invalid Json"},
		{`{}`, "Missing required field Statement"},
		{`{"Statement":[]}`, "Could not parse the policy: Statement is empty!"},
		{`{"Version":"2012-10-16","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}`,
			"The policy must contain a valid version string"},
		{`{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}}`, ""},
		{doc("Maybe", `"*"`, `"s3:GetObject"`, obj, ""), "Invalid effect: Maybe"},
		{doc("Allow", `""`, `"s3:GetObject"`, obj, ""), "Invalid principal in policy"},
		{doc("Allow", `{"AWS":[]}`, `"s3:GetObject"`, obj, ""), "Invalid principal in policy"},
		{doc("Allow", `["*","alice"]`, `"s3:GetObject"`, obj, ""), "Invalid principal in policy"},
		{doc("Allow", `"mallory"`, `"s3:GetObject"`, obj, ""), "Invalid principal in policy"},
		{doc("Allow", `{"AWS":["arn:aws:iam::123456789012:user/alice","AKIDBOB"]}`, `"s3:GetObject"`, obj, ""), ""},
		{doc("Allow", `"*"`, `"s3:Put-Object"`, obj, ""), "Policy has invalid action"},
		{doc("Allow", `"*"`, `"s4:GetObject"`, obj, ""), "Policy has invalid action"},
		{doc("Allow", `"*"`, `"s3:????"`, obj, ""), "Policy has invalid action"},
		{doc("Allow", `"*"`, `["s3:Get*","s3:ListBucket"]`, fmt.Sprintf("[%s,%s]", obj, bkt), ""), ""},
		{doc("Allow", `"*"`, `"s3:GetObject"`, `"arn:aws:iam:::b/*"`, ""), "Policy has invalid resource"},
		{doc("Allow", `"*"`, `"s3:GetObject"`, `"arn:aws:s3:::/b/*"`, ""), "Policy has invalid resource"},
		{doc("Allow", `"*"`, `"s3:GetObject"`, `"arn:aws:s3:::other/*"`, ""), "Policy has invalid resource"},
		{doc("Allow", `"*"`, `"s3:GetObject"`, bkt, ""), "Action does not apply to any resource(s) in statement"},
		{doc("Allow", `"*"`, `"s3:ListBucket"`, obj, ""), "Action does not apply to any resource(s) in statement"},
		{doc("Allow", `"*"`, `"s3:GetObject"`, obj, `{"StringLikeIfExists":{"aws:UserAgent":"curl*"}}`), ""},
		{doc("Allow", `"*"`, `"s3:GetObject"`, obj, `{"NullIfExists":{"aws:UserAgent":"true"}}`), "Invalid Condition type : NullIfExists"},
		{doc("Allow", `"*"`, `"s3:GetObject"`, obj, `{"ForSomeValues:StringEquals":{"aws:UserAgent":"x"}}`), "Invalid Condition type : ForSomeValues:StringEquals"},
		{doc("Allow", `"*"`, `"s3:GetObject"`, obj, `{"StringEquals":{"s3:Fake":"x"}}`), "Policy has an invalid condition key"},
		{doc("Allow", `"*"`, `"s3:GetObject"`, obj, `{"StringEquals":{"s3:prefix":"x"}}`), "Conditions do not apply to combination of actions and resources in statement"},
		{doc("Allow", `"*"`, `"s3:ListBucket"`, bkt, `{"StringEquals":{"s3:prefix":"x"}}`), ""},
		{doc("Allow", `"*"`, `"s3:GetObject"`, obj, `{"IpAddress":{"aws:SourceIp":"300.1.1.1/40"}}`), "Invalid IP address in Conditions"},
		{doc("Allow", `"*"`, `"s3:GetObject"`, obj, `{"Null":{"aws:SourceIp":"true"}}`), "Invalid IP address in Conditions"},
		{doc("Deny", `"*"`, `"s3:GetObject"`, `"arn:aws:s3:::b/${aws:username}/*"`, ""),
			"Policy variables (${...}) are not offered by strato's gateway (docs/s3.md)"},
		{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","NotAction":"s3:DeleteObject","Resource":"arn:aws:s3:::b/*"}]}`,
			"NotPrincipal, NotAction and NotResource are not offered by strato's gateway (docs/s3.md)"},
	} {
		_, err := parsePolicy([]byte(c.doc), "b", known)
		if c.want == "" {
			require.NoError(t, err, c.doc)
			continue
		}
		require.Error(t, err, c.doc)
		var e *Error
		require.ErrorAs(t, err, &e, c.doc)
		require.Equal(t, "MalformedPolicy", e.Code, c.doc)
		require.Equal(t, c.want, e.Message, c.doc)
	}
}

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true}, {"*", "abc", true}, {"a*c", "abbbc", true}, {"a*c", "abcd", false},
		{"a?c", "abc", true}, {"a?c", "ac", false}, {"s3:Get*", "s3:GetObject", true},
		{"b/private/*", "b/private/x/y", true}, {"b/private/*", "b/public", false}, {"*a*b", "xaab", true},
	} {
		require.Equal(t, c.want, globMatch(c.pattern, c.s), "%q %q", c.pattern, c.s)
	}
}

// Conditions: each operator on a present and a missing key, IfExists and
// the negated operators holding on a missing one, as IAM evaluates them.
func TestConditionHolds(t *testing.T) {
	ctx := map[string]string{"aws:sourceip": "127.0.0.1", "s3:prefix": "logs/", "s3:max-keys": "10",
		"aws:currenttime": "2026-11-29T00:00:00Z", "aws:securetransport": "false"}
	for _, c := range []struct {
		op, key string
		values  []string
		want    bool
	}{
		{"StringEquals", "s3:prefix", []string{"logs/"}, true},
		{"StringEquals", "s3:prefix", []string{"x", "logs/"}, true},
		{"StringNotEquals", "s3:prefix", []string{"logs/"}, false},
		{"StringLike", "s3:prefix", []string{"lo*"}, true},
		{"StringEqualsIgnoreCase", "s3:prefix", []string{"LOGS/"}, true},
		{"NumericLessThanEquals", "s3:max-keys", []string{"10"}, true},
		{"NumericGreaterThan", "s3:max-keys", []string{"10"}, false},
		{"DateLessThan", "aws:currenttime", []string{"2027-01-01"}, true},
		{"DateGreaterThan", "aws:currenttime", []string{"2027-01-01T00:00:00Z"}, false},
		{"Bool", "aws:securetransport", []string{"true"}, false},
		{"IpAddress", "aws:sourceip", []string{"127.0.0.0/8"}, true},
		{"NotIpAddress", "aws:sourceip", []string{"127.0.0.0/8"}, false},
		{"IpAddress", "aws:sourceip", []string{"10.0.0.0/8"}, false},
		{"Null", "aws:referer", []string{"true"}, true},
		{"Null", "s3:prefix", []string{"true"}, false},
		{"StringEquals", "aws:referer", []string{"x"}, false},
		{"StringEqualsIfExists", "aws:referer", []string{"x"}, true},
		{"StringNotEquals", "aws:referer", []string{"x"}, true},
	} {
		cond, ok := parseOperator(c.op)
		require.True(t, ok, c.op)
		cond.key, cond.values = c.key, c.values
		require.Equal(t, c.want, cond.holds(ctx), "%s %s %v", c.op, c.key, c.values)
	}
}

// FuzzParsePolicy: no document makes the parser or an evaluation panic,
// and a document accepted once is accepted again (the gateway parses the
// stored policy on every read).
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}`,
		`{"Version":"2012-10-17","Statement":{"Effect":"Deny","Principal":{"AWS":["alice"]},"Action":["s3:*"],"Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"],"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"},"NumericLessThan":{"s3:max-keys":5}}}}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::b","Condition":{"ForAllValues:StringLikeIfExists":{"s3:prefix":["a*","b?"]},"Null":{"s3:delimiter":true}}}]}`,
	} {
		f.Add([]byte(s))
	}
	known := func(n string) bool { return n == "alice" }
	f.Fuzz(func(t *testing.T, doc []byte) {
		p, err := parsePolicy(doc, "b", known)
		if err != nil {
			return
		}
		if _, err := parsePolicy(doc, "b", known); err != nil {
			t.Fatalf("accepted once, refused again: %v", err)
		}
		ctx := map[string]string{"aws:sourceip": "10.1.2.3", "s3:prefix": "ab", "s3:max-keys": "3"}
		for _, s := range p.Statements {
			for _, c := range s.Conditions {
				_ = c.holds(ctx)
			}
			_ = anyGlob(s.Resources, "b/some/key")
			_ = anyGlob(s.Actions, "s3:GetObject")
		}
	})
}
