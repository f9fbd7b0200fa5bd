package s3

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Bucket policies (docs/s3.md, "Bucket policies"; decision 0089): AWS's
// policy language, checked as AWS checks it when it is put (MalformedPolicy,
// worded as AWS words it) and kept verbatim as the bucket's attribute
// attrPolicy, so that it survives a meta failover and every gateway reads
// the same one. This file parses and checks a document; access.go decides
// requests with it.

const (
	// attrPolicy holds a bucket's policy document as it was put. The
	// x-strato-acl- prefix makes meta ask WRITE_ACL of whoever changes it.
	attrPolicy = "x-strato-acl-policy"
	// maxPolicy bounds a policy document (AWS: 20 KB).
	maxPolicy = 20 << 10
	// s3ARN is the prefix of every resource of a bucket policy.
	s3ARN = "arn:aws:s3:::"
)

// malformedPolicy is the error of a document AWS would refuse.
func malformedPolicy(msg string) *Error { return s3err("MalformedPolicy", 400, msg) }

// AWS's messages for the refusals of PutBucketPolicy.
var (
	errPolicyFirstByte     = malformedPolicy("Policies must be valid JSON and the first byte must be '{'")
	errPolicyInvalidJSON   = malformedPolicy("This policy contains invalid Json")
	errPolicyNoStatement   = malformedPolicy("Missing required field Statement")
	errPolicyEmpty         = malformedPolicy("Could not parse the policy: Statement is empty!")
	errPolicyVersion       = malformedPolicy("The policy must contain a valid version string")
	errPolicyPrincipal     = malformedPolicy("Invalid principal in policy")
	errPolicyAction        = malformedPolicy("Policy has invalid action")
	errPolicyResource      = malformedPolicy("Policy has invalid resource")
	errPolicyMismatch      = malformedPolicy("Action does not apply to any resource(s) in statement")
	errPolicyConditionKey  = malformedPolicy("Policy has an invalid condition key")
	errPolicyConditionUse  = malformedPolicy("Conditions do not apply to combination of actions and resources in statement")
	errPolicyConditionIP   = malformedPolicy("Invalid IP address in Conditions")
	errNoSuchBucketPolicy  = s3err("NoSuchBucketPolicy", 404, "The bucket policy does not exist.")
	errPolicyNotAnonymous  = s3err("MethodNotAllowed", 405, "The specified method is not allowed against this resource.")
	errAnonymousNotAllowed = s3err("AccessDenied", 403, "Anonymous users cannot invoke this API. Please authenticate.")
)

// policy is a parsed bucket policy.
type policy struct {
	Version    string
	Statements []statement
}

// statement is one statement of a policy. Resources are without the
// arn:aws:s3::: prefix ("bucket", "bucket/prefix*").
type statement struct {
	Deny       bool
	Anyone     bool     // Principal "*" (anonymous requests too)
	Principals []string // user names or access keys, as written (ARN prefix removed)
	Actions    []string
	Resources  []string
	Conditions []condition
}

// rawStatement is a statement as JSON has it: most elements are a string or
// an array of strings.
type rawStatement struct {
	Sid       string          `json:"Sid"`
	Effect    *string         `json:"Effect"`
	Principal json.RawMessage `json:"Principal"`
	Action    json.RawMessage `json:"Action"`
	Resource  json.RawMessage `json:"Resource"`
	Condition json.RawMessage `json:"Condition"`
	// Not offered: refused rather than ignored, which could widen an
	// Allow or narrow a Deny.
	NotPrincipal json.RawMessage `json:"NotPrincipal"`
	NotAction    json.RawMessage `json:"NotAction"`
	NotResource  json.RawMessage `json:"NotResource"`
}

// parsePolicy parses and checks a document put on bucket; principal tells
// whether a name is a principal strato knows (a user or an access key).
func parsePolicy(doc []byte, bucket string, principal func(string) bool) (*policy, error) {
	if len(doc) == 0 || doc[0] != '{' {
		return nil, errPolicyFirstByte
	}
	var raw struct {
		Version   *string         `json:"Version"`
		Statement json.RawMessage `json:"Statement"`
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&raw); err != nil || dec.More() {
		return nil, errPolicyInvalidJSON
	}
	if raw.Statement == nil {
		return nil, errPolicyNoStatement
	}
	var raws []rawStatement
	if err := json.Unmarshal(raw.Statement, &raws); err != nil {
		var one rawStatement
		if json.Unmarshal(raw.Statement, &one) != nil {
			return nil, errPolicyInvalidJSON
		}
		raws = []rawStatement{one}
	}
	if len(raws) == 0 {
		return nil, errPolicyEmpty
	}
	p := &policy{Version: "2008-10-17"}
	if raw.Version != nil {
		p.Version = *raw.Version
	}
	if p.Version != "2008-10-17" && p.Version != "2012-10-17" {
		return nil, errPolicyVersion
	}
	for _, rs := range raws {
		s, err := parseStatement(rs, bucket, principal)
		if err != nil {
			return nil, err
		}
		p.Statements = append(p.Statements, s)
	}
	return p, nil
}

// parseStatement checks one statement, in the order AWS reports its
// faults.
func parseStatement(rs rawStatement, bucket string, principal func(string) bool) (statement, error) {
	var s statement
	switch {
	case rs.NotPrincipal != nil || rs.NotAction != nil || rs.NotResource != nil:
		return s, malformedPolicy("NotPrincipal, NotAction and NotResource are not offered by strato's gateway (docs/s3.md)")
	case bytes.Contains(rs.Resource, []byte("${")) || bytes.Contains(rs.Condition, []byte("${")):
		return s, malformedPolicy("Policy variables (${...}) are not offered by strato's gateway (docs/s3.md)")
	case rs.Effect == nil:
		return s, malformedPolicy("Missing required field Effect")
	case *rs.Effect == "Deny":
		s.Deny = true
	case *rs.Effect != "Allow":
		return s, malformedPolicy("Invalid effect: " + *rs.Effect)
	}
	var err error
	if s.Anyone, s.Principals, err = parsePrincipal(rs.Principal, principal); err != nil {
		return s, err
	}
	if s.Actions, err = stringsOf(rs.Action, errPolicyAction); err != nil {
		return s, err
	}
	for _, a := range s.Actions {
		if !validAction(a) {
			return s, errPolicyAction
		}
	}
	if s.Resources, err = parseResources(rs.Resource, bucket); err != nil {
		return s, err
	}
	if s.Conditions, err = parseConditions(rs.Condition, s.Actions); err != nil {
		return s, err
	}
	return s, checkActionsApply(s)
}

// stringsOf decodes a string or a non-empty array of non-empty strings.
func stringsOf(raw json.RawMessage, bad *Error) ([]string, error) {
	if raw == nil {
		return nil, bad
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, bad
		}
		return []string{one}, nil
	}
	var many []string
	if json.Unmarshal(raw, &many) != nil || len(many) == 0 || slices.Contains(many, "") {
		return nil, bad
	}
	return many, nil
}

// iamUserARN is the prefix of a user's ARN in any account
// (arn:aws:iam::123456789012:user/NAME names the strato user NAME).
const iamUserARN = "arn:aws:iam::"

// parsePrincipal decodes "*", {"AWS": "*"} or the names of strato users or
// access keys, bare or as arn:aws:iam::ACCOUNT:user/NAME.
func parsePrincipal(raw json.RawMessage, known func(string) bool) (bool, []string, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		aws, ok := obj["AWS"]
		if !ok || len(obj) != 1 {
			return false, nil, errPolicyPrincipal
		}
		raw = aws
	}
	names, err := stringsOf(raw, errPolicyPrincipal)
	if err != nil {
		return false, nil, err
	}
	if slices.Contains(names, "*") {
		if len(names) != 1 {
			return false, nil, errPolicyPrincipal
		}
		return true, nil, nil
	}
	for i, n := range names {
		if rest, ok := strings.CutPrefix(n, iamUserARN); ok {
			_, name, ok := strings.Cut(rest, ":user/")
			if !ok || name == "" {
				return false, nil, errPolicyPrincipal
			}
			names[i] = name
		}
		if !known(names[i]) {
			return false, nil, errPolicyPrincipal
		}
	}
	return false, names, nil
}

// parseResources decodes the resources, each arn:aws:s3:::BUCKET or
// arn:aws:s3:::BUCKET/KEY-PATTERN of the policy's own bucket.
func parseResources(raw json.RawMessage, bucket string) ([]string, error) {
	rs, err := stringsOf(raw, errPolicyResource)
	if err != nil {
		return nil, err
	}
	for i, r := range rs {
		res, ok := strings.CutPrefix(r, s3ARN)
		if !ok || res == "" || strings.HasPrefix(res, "/") {
			return nil, errPolicyResource
		}
		if b, _, _ := strings.Cut(res, "/"); !globMatch(b, bucket) {
			return nil, errPolicyResource
		}
		rs[i] = res
	}
	return rs, nil
}

// checkActionsApply refuses a statement with an action for objects and no
// resource of objects, or an action for buckets and no bucket resource.
func checkActionsApply(s statement) error {
	var objects, buckets bool
	for _, r := range s.Resources {
		if strings.Contains(r, "/") || r == "*" {
			objects = true
		}
		if !strings.Contains(r, "/") {
			buckets = true
		}
	}
	for _, a := range s.Actions {
		if a == "s3:*" {
			continue
		}
		if objectAction(a) && !objects || !objectAction(a) && !buckets {
			return errPolicyMismatch
		}
	}
	return nil
}

// globMatch matches s against a pattern of * (any run) and ? (any one
// character), as IAM does.
func globMatch(pattern, s string) bool {
	star, mark := -1, 0
	p, i := 0, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
