package s3

import (
	"net/http"
	"strings"
)

// The actions of bucket policies: AWS's names, whether each applies to
// objects (arn:aws:s3:::bucket/key) or to the bucket, and the action each
// request of the gateway is.

// actions are the S3 actions a policy may name; true: an object action.
var actions = map[string]bool{
	"s3:AbortMultipartUpload": true, "s3:ListMultipartUploadParts": true, "s3:PutObject": true,
	"s3:GetObject": true, "s3:GetObjectVersion": true, "s3:DeleteObject": true, "s3:DeleteObjectVersion": true,
	"s3:GetObjectAcl": true, "s3:GetObjectVersionAcl": true, "s3:PutObjectAcl": true, "s3:PutObjectVersionAcl": true,
	"s3:GetObjectAttributes": true, "s3:GetObjectVersionAttributes": true, "s3:RestoreObject": true,
	"s3:GetObjectTagging": true, "s3:GetObjectVersionTagging": true, "s3:PutObjectTagging": true,
	"s3:PutObjectVersionTagging": true, "s3:DeleteObjectTagging": true, "s3:DeleteObjectVersionTagging": true,
	"s3:GetObjectLegalHold": true, "s3:PutObjectLegalHold": true, "s3:GetObjectRetention": true,
	"s3:PutObjectRetention": true, "s3:BypassGovernanceRetention": true,

	"s3:CreateBucket": false, "s3:DeleteBucket": false, "s3:ListBucket": false, "s3:ListBucketVersions": false,
	"s3:ListBucketMultipartUploads": false, "s3:GetBucketAcl": false, "s3:PutBucketAcl": false,
	"s3:GetBucketVersioning": false, "s3:PutBucketVersioning": false, "s3:GetBucketPolicy": false,
	"s3:PutBucketPolicy": false, "s3:DeleteBucketPolicy": false, "s3:GetBucketPolicyStatus": false,
	"s3:GetBucketTagging": false, "s3:PutBucketTagging": false, "s3:GetBucketCORS": false, "s3:PutBucketCORS": false,
	"s3:GetBucketOwnershipControls": false, "s3:PutBucketOwnershipControls": false, "s3:GetBucketLocation": false,
	"s3:GetBucketObjectLockConfiguration": false, "s3:PutBucketObjectLockConfiguration": false,
	"s3:GetLifecycleConfiguration": false, "s3:PutLifecycleConfiguration": false,
	"s3:GetEncryptionConfiguration": false, "s3:PutEncryptionConfiguration": false,
	"s3:GetBucketWebsite": false, "s3:PutBucketWebsite": false, "s3:DeleteBucketWebsite": false,
	"s3:GetBucketLogging": false, "s3:PutBucketLogging": false, "s3:GetBucketNotification": false,
	"s3:PutBucketNotification": false, "s3:GetBucketPublicAccessBlock": false, "s3:PutBucketPublicAccessBlock": false,
	"s3:GetReplicationConfiguration": false, "s3:PutReplicationConfiguration": false,
	"s3:GetBucketRequestPayment": false, "s3:PutBucketRequestPayment": false,
	"s3:GetAccelerateConfiguration": false, "s3:PutAccelerateConfiguration": false,
	"s3:GetAnalyticsConfiguration": false, "s3:PutAnalyticsConfiguration": false,
	"s3:GetInventoryConfiguration": false, "s3:PutInventoryConfiguration": false,
	"s3:GetMetricsConfiguration": false, "s3:PutMetricsConfiguration": false,
	"s3:GetIntelligentTieringConfiguration": false, "s3:PutIntelligentTieringConfiguration": false,
}

// validAction: s3:* or a pattern that names at least one action.
func validAction(pattern string) bool {
	if pattern == "s3:*" {
		return true
	}
	if !strings.HasPrefix(pattern, "s3:") {
		return false
	}
	for a := range actions {
		if globMatch(pattern, a) {
			return true
		}
	}
	return false
}

// objectAction: the pattern names an action on objects.
func objectAction(pattern string) bool {
	for a, obj := range actions {
		if obj && globMatch(pattern, a) {
			return true
		}
	}
	return false
}

// requestAction is the policy action of a request and whether it acts on
// its key (else on its bucket). It mirrors serve's routing; "" for a
// request no policy governs (ListBuckets, CreateBucket, PostObject and
// subresources the gateway does not serve).
func requestAction(r *http.Request, key string) string {
	q := r.URL.Query()
	has := func(k string) bool { _, ok := q[k]; return ok }
	m := r.Method
	if key == "" {
		return bucketAction(m, has)
	}
	versioned := q.Get("versionId") != ""
	pick := func(plain, version string) string {
		if versioned {
			return version
		}
		return plain
	}
	switch {
	case has("tagging"):
		return map[string]string{http.MethodGet: pick("s3:GetObjectTagging", "s3:GetObjectVersionTagging"),
			http.MethodPut:    pick("s3:PutObjectTagging", "s3:PutObjectVersionTagging"),
			http.MethodDelete: pick("s3:DeleteObjectTagging", "s3:DeleteObjectVersionTagging")}[m]
	case has("acl"):
		return map[string]string{http.MethodGet: pick("s3:GetObjectAcl", "s3:GetObjectVersionAcl"),
			http.MethodPut: pick("s3:PutObjectAcl", "s3:PutObjectVersionAcl")}[m]
	case has("attributes"):
		return pick("s3:GetObjectAttributes", "s3:GetObjectVersionAttributes")
	case m == http.MethodGet && has("uploadId"):
		return "s3:ListMultipartUploadParts"
	case m == http.MethodGet || m == http.MethodHead:
		return pick("s3:GetObject", "s3:GetObjectVersion")
	case m == http.MethodPut, m == http.MethodPost:
		return "s3:PutObject"
	case m == http.MethodDelete && has("uploadId"):
		return "s3:AbortMultipartUpload"
	case m == http.MethodDelete:
		return pick("s3:DeleteObject", "s3:DeleteObjectVersion")
	}
	return ""
}

// bucketAction is requestAction of a request to a bucket.
func bucketAction(m string, has func(string) bool) string {
	get, put, del := m == http.MethodGet, m == http.MethodPut, m == http.MethodDelete
	for _, sub := range []struct{ name, get, put, del string }{
		{"policyStatus", "s3:GetBucketPolicyStatus", "", ""},
		{"policy", "s3:GetBucketPolicy", "s3:PutBucketPolicy", "s3:DeleteBucketPolicy"},
		{"ownershipControls", "s3:GetBucketOwnershipControls", "s3:PutBucketOwnershipControls", "s3:PutBucketOwnershipControls"},
		{"acl", "s3:GetBucketAcl", "s3:PutBucketAcl", ""},
		{"tagging", "s3:GetBucketTagging", "s3:PutBucketTagging", "s3:PutBucketTagging"},
		{"cors", "s3:GetBucketCORS", "s3:PutBucketCORS", "s3:PutBucketCORS"},
		{"versioning", "s3:GetBucketVersioning", "s3:PutBucketVersioning", ""},
		{"location", "s3:GetBucketLocation", "", ""},
		{"uploads", "s3:ListBucketMultipartUploads", "", ""},
		{"versions", "s3:ListBucketVersions", "", ""},
	} {
		if has(sub.name) {
			switch {
			case get:
				return sub.get
			case put:
				return sub.put
			case del:
				return sub.del
			}
			return ""
		}
	}
	switch m {
	case http.MethodGet, http.MethodHead:
		return "s3:ListBucket"
	case http.MethodDelete:
		return "s3:DeleteBucket"
	case http.MethodPost:
		if has("delete") {
			return "s3:DeleteObject" // each key's, checked by deleteObjects
		}
	}
	return ""
}
