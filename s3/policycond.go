package s3

import (
	"encoding/base64"
	"encoding/json"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Conditions of policy statements: {"Operator": {"key": value-or-values}}.
// Every condition of a statement must hold; a condition holds when one of
// its values matches the request's value of the key (for the Not
// operators: when none does).

// condition is one key of one operator.
type condition struct {
	op       string // the base operator: StringEquals, IpAddress, Null, ...
	ifExists bool   // ...IfExists: a missing key holds
	forAll   bool   // ForAllValues: (every key is single-valued here)
	key      string // lower case
	values   []string
}

// operators are the base operators, each with its comparison of a policy
// value (want) with a request's (have) and whether it is negated.
var operators = map[string]struct {
	match  func(want, have string) bool
	negate bool
}{
	"StringEquals":              {func(w, h string) bool { return w == h }, false},
	"StringNotEquals":           {func(w, h string) bool { return w == h }, true},
	"StringEqualsIgnoreCase":    {strings.EqualFold, false},
	"StringNotEqualsIgnoreCase": {strings.EqualFold, true},
	"StringLike":                {globMatch, false},
	"StringNotLike":             {globMatch, true},
	"NumericEquals":             {numeric(func(w, h float64) bool { return h == w }), false},
	"NumericNotEquals":          {numeric(func(w, h float64) bool { return h == w }), true},
	"NumericLessThan":           {numeric(func(w, h float64) bool { return h < w }), false},
	"NumericLessThanEquals":     {numeric(func(w, h float64) bool { return h <= w }), false},
	"NumericGreaterThan":        {numeric(func(w, h float64) bool { return h > w }), false},
	"NumericGreaterThanEquals":  {numeric(func(w, h float64) bool { return h >= w }), false},
	"DateEquals":                {date(func(w, h time.Time) bool { return h.Equal(w) }), false},
	"DateNotEquals":             {date(func(w, h time.Time) bool { return h.Equal(w) }), true},
	"DateLessThan":              {date(func(w, h time.Time) bool { return h.Before(w) }), false},
	"DateLessThanEquals":        {date(func(w, h time.Time) bool { return !h.After(w) }), false},
	"DateGreaterThan":           {date(func(w, h time.Time) bool { return h.After(w) }), false},
	"DateGreaterThanEquals":     {date(func(w, h time.Time) bool { return !h.Before(w) }), false},
	"Bool":                      {strings.EqualFold, false},
	"BinaryEquals":              {binaryEquals, false},
	"IpAddress":                 {ipMatch, false},
	"NotIpAddress":              {ipMatch, true},
	"ArnEquals":                 {globMatch, false},
	"ArnLike":                   {globMatch, false},
	"ArnNotEquals":              {globMatch, true},
	"ArnNotLike":                {globMatch, true},
}

// conditionKeys are the keys a condition may name (lower case), each with
// the actions it applies to (nil: all).
var conditionKeys = map[string][]string{
	"aws:sourceip": nil, "aws:currenttime": nil, "aws:epochtime": nil, "aws:securetransport": nil,
	"aws:useragent": nil, "aws:referer": nil, "aws:principalarn": nil, "aws:username": nil,
	"aws:userid": nil, "aws:multifactorauthage": nil,
	"s3:prefix":    {"s3:ListBucket", "s3:ListBucketVersions"},
	"s3:delimiter": {"s3:ListBucket", "s3:ListBucketVersions"},
	"s3:max-keys":  {"s3:ListBucket", "s3:ListBucketVersions"},
	"s3:x-amz-acl": {"s3:PutObject", "s3:PutBucketAcl", "s3:PutObjectAcl"},
	"s3:versionid": {"s3:GetObjectVersion", "s3:DeleteObjectVersion", "s3:GetObjectVersionAttributes",
		"s3:GetObjectVersionTagging", "s3:PutObjectVersionTagging", "s3:DeleteObjectVersionTagging"},
}

// parseOperator splits ForAnyValue:StringLikeIfExists into its parts.
func parseOperator(name string) (c condition, ok bool) {
	base := name
	if q, rest, found := strings.Cut(name, ":"); found {
		switch q {
		case "ForAllValues":
			c.forAll = true
		case "ForAnyValue":
		default:
			return c, false
		}
		base = rest
	}
	if base == "Null" {
		c.op = base
		return c, true
	}
	if b, found := strings.CutSuffix(base, "IfExists"); found {
		c.ifExists, base = true, b
	}
	_, ok = operators[base]
	c.op = base
	return c, ok
}

// parseConditions decodes and checks a statement's Condition block
// against its actions.
func parseConditions(raw json.RawMessage, actions []string) ([]condition, error) {
	if raw == nil {
		return nil, nil
	}
	var block map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &block); err != nil {
		return nil, errPolicyInvalidJSON
	}
	var out []condition
	for _, name := range sortedKeys(block) {
		c, ok := parseOperator(name)
		if !ok {
			return nil, malformedPolicy("Invalid Condition type : " + name)
		}
		for _, key := range sortedKeys(block[name]) {
			k := c
			k.key = strings.ToLower(key)
			var err error
			if k.values, err = conditionValues(block[name][key]); err != nil {
				return nil, err
			}
			if err := checkConditionKey(k, actions); err != nil {
				return nil, err
			}
			out = append(out, k)
		}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// conditionValues decodes a value or an array of values (strings, numbers
// or booleans, compared as their text).
func conditionValues(raw json.RawMessage) ([]string, error) {
	var many []json.RawMessage
	if json.Unmarshal(raw, &many) != nil {
		many = []json.RawMessage{raw}
	}
	out := make([]string, 0, len(many))
	for _, v := range many {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out = append(out, s)
			continue
		}
		var x any
		if json.Unmarshal(v, &x) != nil {
			return nil, errPolicyInvalidJSON
		}
		switch x.(type) {
		case float64, bool:
			out = append(out, strings.TrimSpace(string(v)))
		default:
			return nil, errPolicyInvalidJSON
		}
	}
	return out, nil
}

// checkConditionKey refuses a key strato does not know, one that does not
// apply to every (wildcard-free) action of the statement, and an address
// that is not one.
func checkConditionKey(c condition, actions []string) error {
	applies, ok := conditionKeys[c.key]
	if !ok {
		return errPolicyConditionKey
	}
	if applies != nil {
		for _, a := range actions {
			if !strings.ContainsAny(a, "*?") && !slices.Contains(applies, a) {
				return errPolicyConditionUse
			}
		}
	}
	if c.key == "aws:sourceip" {
		for _, v := range c.values {
			if _, ok := parseIPOrPrefix(v); !ok {
				return errPolicyConditionIP
			}
		}
	}
	return nil
}

// holds evaluates the condition on the request's values (keys lower case;
// a key missing from ctx is not in the request).
func (c condition) holds(ctx map[string]string) bool {
	have, present := ctx[c.key]
	if c.op == "Null" {
		// "true": the key must be missing; "false": present.
		return slices.ContainsFunc(c.values, func(v string) bool { return strings.EqualFold(v, strconv.FormatBool(!present)) })
	}
	o := operators[c.op]
	if !present {
		// AWS: a missing key fails a condition, but holds for ...IfExists,
		// for the negated operators and for ForAllValues.
		return c.ifExists || o.negate || c.forAll
	}
	matched := slices.ContainsFunc(c.values, func(want string) bool { return o.match(want, have) })
	return matched != o.negate
}

func numeric(cmp func(want, have float64) bool) func(string, string) bool {
	return func(w, h string) bool {
		wf, err1 := strconv.ParseFloat(w, 64)
		hf, err2 := strconv.ParseFloat(h, 64)
		return err1 == nil && err2 == nil && cmp(wf, hf)
	}
}

func date(cmp func(want, have time.Time) bool) func(string, string) bool {
	return func(w, h string) bool {
		wt, ok1 := parseDate(w)
		ht, ok2 := parseDate(h)
		return ok1 && ok2 && cmp(wt, ht)
	}
}

// parseDate reads an ISO 8601 date (with or without a time) or epoch
// seconds, as IAM does.
func parseDate(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), true
	}
	return time.Time{}, false
}

func binaryEquals(want, have string) bool {
	return want == base64.StdEncoding.EncodeToString([]byte(have))
}

// parseIPOrPrefix reads an address or a CIDR block.
func parseIPOrPrefix(s string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

func ipMatch(want, have string) bool {
	p, ok := parseIPOrPrefix(want)
	a, err := netip.ParseAddr(have)
	return ok && err == nil && p.Contains(a.Unmap())
}
