package s3

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// A POST policy (AWS's "Creating a POST policy"): the base64 JSON document
// a browser form carries beside its signature, saying until when the form
// may be used and what its fields may hold. Every form field but the
// signature, the policy, the file and x-ignore-* ones must be allowed by a
// condition, the bucket too.

// postPolicy is a parsed policy document.
type postPolicy struct {
	expiration time.Time
	conditions []postCondition
}

// postCondition is one condition: an exact match or a prefix of a field,
// or the range of the file's length.
type postCondition struct {
	op       string // "eq", "starts-with", "content-length-range"
	field    string // the field, lower-case, without its '$'; "" when the policy named it without one
	value    string
	min, max int64
	text     string // the condition as a failure quotes it
}

func policyErr(format string, args ...any) *Error {
	return &Error{Code: "InvalidPolicyDocument", Status: 400, Message: "Invalid Policy: " + fmt.Sprintf(format, args...)}
}

func policyDenied(format string, args ...any) *Error {
	return errf(ErrAccessDenied, "Invalid according to Policy: "+format, args...)
}

var errPolicyJSON = policyErr("Invalid JSON.")

// parsePostPolicy decodes and checks a policy field.
func parsePostPolicy(encoded string) (*postPolicy, error) {
	if encoded == "" {
		return nil, policyErr("Expecting '{' but found End-of-Input")
	}
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, policyErr("invalid Base64 encoding.")
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, errPolicyJSON
	}
	for k := range doc {
		if k != "expiration" && k != "conditions" {
			return nil, policyErr("Unexpected: %q", k)
		}
	}
	p := &postPolicy{}
	exp, ok := doc["expiration"]
	if !ok {
		return nil, policyErr("Policy missing expiration.")
	}
	var es string
	if err := json.Unmarshal(exp, &es); err != nil {
		return nil, errPolicyJSON
	}
	if p.expiration, err = time.Parse(time.RFC3339Nano, es); err != nil {
		return nil, policyErr("Invalid 'expiration' value: '%s'", es)
	}
	conds, ok := doc["conditions"]
	if !ok {
		return nil, policyErr("Policy missing conditions.")
	}
	var list []json.RawMessage
	if err := json.Unmarshal(conds, &list); err != nil {
		return nil, policyErr("Invalid 'conditions' value: must be a List.")
	}
	for _, c := range list {
		pc, err := parseCondition(c)
		if err != nil {
			return nil, err
		}
		p.conditions = append(p.conditions, pc)
	}
	return p, nil
}

// parseCondition parses one condition: {"field": "value"} or
// ["eq"|"starts-with", "$field", "value"] or
// ["content-length-range", min, max].
func parseCondition(c json.RawMessage) (postCondition, error) {
	switch bytes.TrimSpace(c)[0] {
	case '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(c, &m); err != nil {
			return postCondition{}, errPolicyJSON
		}
		if len(m) != 1 {
			return postCondition{}, policyErr("Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.")
		}
		for k, v := range m {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return postCondition{}, policyErr("Invalid Simple-Condition: value must be a string.")
			}
			return postCondition{op: "eq", field: strings.ToLower(k), value: s,
				text: fmt.Sprintf(`["eq", "$%s", %q]`, k, s)}, nil
		}
	case '[':
		var args []json.RawMessage
		if err := json.Unmarshal(c, &args); err != nil {
			return postCondition{}, errPolicyJSON
		}
		return parseListCondition(args)
	}
	return postCondition{}, policyErr("Invalid condition test: must be a List or Object.")
}

func parseListCondition(args []json.RawMessage) (postCondition, error) {
	if len(args) == 0 {
		return postCondition{}, policyErr("Invalid Condition: missing operation identifier.")
	}
	var op string
	if err := json.Unmarshal(args[0], &op); err != nil {
		return postCondition{}, errPolicyJSON
	}
	op = strings.ToLower(op)
	switch op {
	case "eq", "starts-with", "content-length-range":
	default:
		return postCondition{}, policyErr("Invalid Condition: unknown operation '%s'.", op)
	}
	if len(args) != 3 {
		return postCondition{}, policyErr("Invalid %s: wrong number of arguments.", op)
	}
	pc := postCondition{op: op}
	if op == "content-length-range" {
		if json.Unmarshal(args[1], &pc.min) != nil || json.Unmarshal(args[2], &pc.max) != nil || pc.min < 0 || pc.max < pc.min {
			return postCondition{}, errPolicyJSON
		}
		pc.text = fmt.Sprintf(`["content-length-range",%d,%d]`, pc.min, pc.max)
		return pc, nil
	}
	var field string
	if json.Unmarshal(args[1], &field) != nil || json.Unmarshal(args[2], &pc.value) != nil {
		return postCondition{}, errPolicyJSON
	}
	if f, ok := strings.CutPrefix(field, "$"); ok {
		pc.field = strings.ToLower(f)
	}
	text, _ := json.Marshal([]string{op, field, pc.value})
	pc.text = string(text)
	return pc, nil
}

// check applies the policy to a form's fields (lower-case names; the
// bucket among them) at time now: the expiration, every condition, and no
// field that no condition allows. The length range, checked as the file
// arrives, is returned (max -1: none).
func (p *postPolicy) check(fields map[string]string, now time.Time) (minLen, maxLen int64, err error) {
	if now.After(p.expiration) {
		return 0, 0, policyDenied("Policy expired.")
	}
	minLen, maxLen = 0, -1
	allowed := map[string]bool{}
	for _, c := range p.conditions {
		if c.op == "content-length-range" {
			minLen, maxLen = c.min, c.max
			continue
		}
		v, ok := fields[c.field]
		if c.field == "" || !c.holds(v, ok) {
			return 0, 0, policyDenied("Policy Condition failed: %s", c.text)
		}
		allowed[c.field] = true
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if !allowed[name] && !exemptFromPolicy(name) {
			return 0, 0, policyDenied("Extra input fields: %s", name)
		}
	}
	return minLen, maxLen, nil
}

// holds says whether the field's value v (present: ok) meets c. A
// starts-with on Content-Type holds for each of a comma-separated list.
func (c postCondition) holds(v string, ok bool) bool {
	if c.op == "eq" {
		return v == c.value && (ok || c.value == "")
	}
	if !ok {
		return c.value == ""
	}
	if c.field == "content-type" {
		for _, part := range strings.Split(v, ",") {
			if !strings.HasPrefix(strings.TrimSpace(part), c.value) {
				return false
			}
		}
		return true
	}
	return strings.HasPrefix(v, c.value)
}

// exemptFromPolicy names the fields no condition needs to allow.
func exemptFromPolicy(name string) bool {
	switch name {
	case "policy", "x-amz-signature", "signature", "awsaccesskeyid", "file":
		return true
	}
	return strings.HasPrefix(name, "x-ignore-")
}
