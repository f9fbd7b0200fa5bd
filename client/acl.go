package client

// ACLs of volumes, buckets, keys, files and directories (meta --auth
// token; docs/security.md, "ACLs"), and their text form, Ozone's:
//
//	user:alice:rw,group:dev:rl[DEFAULT],world::r
//
// TYPE:NAME:RIGHTS[SCOPE], TYPE one of user, group, world (world names no
// one: "world::r", or "world:r"), RIGHTS letters of r READ, w WRITE,
// c CREATE, d DELETE, l LIST, x READ_ACL, y WRITE_ACL, a ALL, n NONE, and
// SCOPE ACCESS (the default) or DEFAULT.

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc/metadata"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// VolumeObject names a volume for the ACL calls.
func VolumeObject(volume string) *stratov1.AclObject {
	return &stratov1.AclObject{Kind: stratov1.AclObjectKind_ACL_OBJECT_VOLUME, Volume: volume}
}

// BucketObject names a bucket for the ACL calls.
func BucketObject(volume, bucket string) *stratov1.AclObject {
	return &stratov1.AclObject{Kind: stratov1.AclObjectKind_ACL_OBJECT_BUCKET, Volume: volume, Bucket: bucket}
}

// KeyObject names a key (OBS), or a file or directory (FSO), for the ACL
// calls.
func KeyObject(volume, bucket, key string) *stratov1.AclObject {
	return &stratov1.AclObject{Kind: stratov1.AclObjectKind_ACL_OBJECT_KEY, Volume: volume, Bucket: bucket, Key: key}
}

// GetAcl returns an object's owner and ACL.
func (c *Client) GetAcl(ctx context.Context, o *stratov1.AclObject) (string, []*stratov1.Acl, error) {
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.GetAclResponse, error) {
		return n.GetAcl(ctx, &stratov1.GetAclRequest{Object: o})
	})
	return resp.GetOwner(), resp.GetAcls(), err
}

// SetAcl replaces an object's ACL.
func (c *Client) SetAcl(ctx context.Context, o *stratov1.AclObject, acls []*stratov1.Acl) error {
	ctx = c.idempotent(ctx)
	_, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.SetAclResponse, error) {
		return n.SetAcl(ctx, &stratov1.SetAclRequest{Object: o, Acls: acls})
	})
	return err
}

// AddAcl adds entries (their rights) to an object's ACL.
func (c *Client) AddAcl(ctx context.Context, o *stratov1.AclObject, acls []*stratov1.Acl) error {
	ctx = c.idempotent(ctx)
	_, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.AddAclResponse, error) {
		return n.AddAcl(ctx, &stratov1.AddAclRequest{Object: o, Acls: acls})
	})
	return err
}

// RemoveAcl removes entries' rights from an object's ACL.
func (c *Client) RemoveAcl(ctx context.Context, o *stratov1.AclObject, acls []*stratov1.Acl) error {
	ctx = c.idempotent(ctx)
	_, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.RemoveAclResponse, error) {
		return n.RemoveAcl(ctx, &stratov1.RemoveAclRequest{Object: o, Acls: acls})
	})
	return err
}

// aclLetters are the rights' letters, in the order FormatRights writes them.
var aclLetters = []struct {
	letter byte
	right  stratov1.AclRight
}{
	{'r', stratov1.AclRight_ACL_READ}, {'w', stratov1.AclRight_ACL_WRITE}, {'c', stratov1.AclRight_ACL_CREATE},
	{'d', stratov1.AclRight_ACL_DELETE}, {'l', stratov1.AclRight_ACL_LIST}, {'x', stratov1.AclRight_ACL_READ_ACL},
	{'y', stratov1.AclRight_ACL_WRITE_ACL},
}

const allRights = uint32(stratov1.AclRight_ACL_ALL)

// ParseRights parses rights letters ("rw", "a", "n").
func ParseRights(s string) (uint32, error) {
	if s == "" {
		return 0, fmt.Errorf("client: ACL rights: none given (letters of rwcdlxy, a for all, n for none)")
	}
	var rights uint32
next:
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'a':
			rights |= allRights
			continue
		case 'n':
			continue
		}
		for _, l := range aclLetters {
			if s[i] == l.letter {
				rights |= uint32(l.right)
				continue next
			}
		}
		return 0, fmt.Errorf("client: ACL rights %q: unknown right %q (letters of rwcdlxy, a for all, n for none)", s, s[i])
	}
	return rights, nil
}

// FormatRights writes rights as letters: "a" for all, "n" for none.
func FormatRights(rights uint32) string {
	switch rights & allRights {
	case allRights:
		return "a"
	case 0:
		return "n"
	}
	var b strings.Builder
	for _, l := range aclLetters {
		if rights&uint32(l.right) != 0 {
			b.WriteByte(l.letter)
		}
	}
	return b.String()
}

// ParseAcl parses one entry, TYPE:NAME:RIGHTS[SCOPE].
func ParseAcl(s string) (*stratov1.Acl, error) {
	in := strings.TrimSpace(s)
	a := &stratov1.Acl{Scope: stratov1.AclScope_ACL_ACCESS}
	if i := strings.IndexByte(in, '['); i >= 0 {
		if !strings.HasSuffix(in, "]") {
			return nil, fmt.Errorf("client: ACL %q: the scope is [ACCESS] or [DEFAULT], at the end", s)
		}
		switch strings.ToUpper(in[i+1 : len(in)-1]) {
		case "ACCESS":
		case "DEFAULT":
			a.Scope = stratov1.AclScope_ACL_DEFAULT
		default:
			return nil, fmt.Errorf("client: ACL %q: scope %q (want ACCESS or DEFAULT)", s, in[i+1:len(in)-1])
		}
		in = in[:i]
	}
	parts := strings.Split(in, ":")
	var rights string
	switch strings.ToLower(parts[0]) {
	case "user", "group":
		if len(parts) != 3 || parts[1] == "" {
			return nil, fmt.Errorf("client: ACL %q: want %s:NAME:RIGHTS", s, strings.ToLower(parts[0]))
		}
		a.Type = stratov1.AclType_ACL_USER
		if strings.ToLower(parts[0]) == "group" {
			a.Type = stratov1.AclType_ACL_GROUP
		}
		a.Name, rights = parts[1], parts[2]
	case "world":
		switch {
		case len(parts) == 3 && parts[1] == "":
			rights = parts[2]
		case len(parts) == 2:
			rights = parts[1]
		default:
			return nil, fmt.Errorf("client: ACL %q: want world::RIGHTS (the world has no name)", s)
		}
		a.Type = stratov1.AclType_ACL_WORLD
	default:
		return nil, fmt.Errorf("client: ACL %q: type %q (want user, group or world)", s, parts[0])
	}
	r, err := ParseRights(rights)
	if err != nil {
		return nil, fmt.Errorf("client: ACL %q: %w", s, err)
	}
	a.Rights = r
	return a, nil
}

// ParseAcls parses a list of entries separated by commas (or new lines).
func ParseAcls(s string) ([]*stratov1.Acl, error) {
	var out []*stratov1.Acl
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if strings.TrimSpace(f) == "" {
			continue
		}
		a, err := ParseAcl(f)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("client: no ACL entry in %q", s)
	}
	return out, nil
}

// FormatAcl writes an entry as ParseAcl reads it ("[ACCESS]" left out).
func FormatAcl(a *stratov1.Acl) string {
	var t string
	switch a.GetType() {
	case stratov1.AclType_ACL_USER:
		t = "user"
	case stratov1.AclType_ACL_GROUP:
		t = "group"
	case stratov1.AclType_ACL_WORLD:
		t = "world"
	default:
		t = a.GetType().String()
	}
	s := t + ":" + a.GetName() + ":" + FormatRights(a.GetRights())
	if a.GetScope() == stratov1.AclScope_ACL_DEFAULT {
		s += "[DEFAULT]"
	}
	return s
}

// FormatAcls writes entries separated by commas.
func FormatAcls(acls []*stratov1.Acl) string {
	out := make([]string, len(acls))
	for i, a := range acls {
		out[i] = FormatAcl(a)
	}
	return strings.Join(out, ",")
}

// CreateUserWith makes a user as req says (CreateUser's, with the proxy
// flag: the user may act on behalf of others, as the S3 gateway does).
func (c *Client) CreateUserWith(ctx context.Context, req *stratov1.CreateUserRequest) (*stratov1.User, error) {
	ctx = c.idempotent(ctx)
	resp, err := admin(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient) (*stratov1.CreateUserResponse, error) {
		return a.CreateUser(ctx, req)
	})
	return resp.GetUser(), err
}

// onBehalfOfMetadata is meta.OnBehalfOfMetadata (the client links no
// server code).
const onBehalfOfMetadata = "strato-on-behalf-of"

// OnBehalfOf returns ctx whose calls to meta act on behalf of user (gRPC
// metadata "strato-on-behalf-of"): meta honours it when the client's token
// is an administrator's or a proxy user's, and refuses the call
// (ErrPermissionDenied) otherwise. The S3 gateway acts so for the user of
// each request's access key. "" returns ctx unchanged.
func OnBehalfOf(ctx context.Context, user string) context.Context {
	if user == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, onBehalfOfMetadata, user)
}

// S3Key returns an S3 access key's record (its user) and its secret.
func (c *Client) S3Key(ctx context.Context, accessKey string) (*stratov1.S3Key, string, error) {
	resp, err := admin(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient) (*stratov1.GetS3SecretResponse, error) {
		return a.GetS3Secret(ctx, &stratov1.GetS3SecretRequest{AccessKey: accessKey})
	})
	return resp.GetKey(), resp.GetSecret(), err
}
