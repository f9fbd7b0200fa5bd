// Authorization of the namespace: owners and ACLs (Ozone's native ACLs;
// docs/security.md, "ACLs").
//
// Every volume, bucket, directory (FSO) and key or file has an owner and an
// ACL: up to MaxAcls entries, each naming a user, a group or the world, a
// set of rights and a scope (ACCESS, or DEFAULT: copied into the objects
// created below). The server checks a right only when it authenticates its
// callers (a Caller is set): Prepare checks mutations on the leader, the
// Reader checks reads. Apply never checks: what it applies was authorized
// when it was prepared.
//
// The rule (decide): a caller has right R on an object when it is an
// administrator, or owns the object or any object above it (its
// directories, its bucket, its volume), or the nearest object on the way up
// from the object that has ACCESS entries at all (the object itself first)
// has an entry matching the caller (its user, one of its groups, the world)
// with R. An object without ACCESS entries thus takes its parent's, as
// Ozone's keys take their bucket's. When the object does not exist, the
// right is checked on its nearest existing parent.

package namespace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// MaxAcls is the most ACL entries one object may have.
const MaxAcls = 64

// Rights, the bits of an ACL entry's rights (stratov1.AclRight).
const (
	RightRead     = uint32(stratov1.AclRight_ACL_READ)
	RightWrite    = uint32(stratov1.AclRight_ACL_WRITE)
	RightCreate   = uint32(stratov1.AclRight_ACL_CREATE)
	RightDelete   = uint32(stratov1.AclRight_ACL_DELETE)
	RightList     = uint32(stratov1.AclRight_ACL_LIST)
	RightReadAcl  = uint32(stratov1.AclRight_ACL_READ_ACL)
	RightWriteAcl = uint32(stratov1.AclRight_ACL_WRITE_ACL)
	RightAll      = uint32(stratov1.AclRight_ACL_ALL)
)

// RightNames names each right bit, in bit order.
var rightNames = []struct {
	bit  uint32
	name string
}{
	{RightRead, "READ"}, {RightWrite, "WRITE"}, {RightCreate, "CREATE"}, {RightDelete, "DELETE"},
	{RightList, "LIST"}, {RightReadAcl, "READ_ACL"}, {RightWriteAcl, "WRITE_ACL"},
}

// RightsString names the rights of a bit set, e.g. "READ|LIST"; "ALL" for
// every right and "NONE" for none.
func RightsString(rights uint32) string {
	switch rights & RightAll {
	case RightAll:
		return "ALL"
	case 0:
		return "NONE"
	}
	var names []string
	for _, r := range rightNames {
		if rights&r.bit != 0 {
			names = append(names, r.name)
		}
	}
	return strings.Join(names, "|")
}

// Caller is who a call is made by, when the server authenticates its
// callers (meta.Identity). nil: no authorization at all.
type Caller struct {
	User   string
	Groups []string
	Admin  bool
}

// aclNode is one object of the chain a right is checked on.
type aclNode struct {
	path  string // "/volume/bucket/key", for messages
	owner string
	acls  []*stratov1.AclRecord
}

// decide applies the rule of the package comment to nodes, the chain from
// the volume down to the object (or its nearest existing parent).
func (c *Caller) decide(nodes []aclNode, right uint32) bool {
	if c.Admin {
		return true
	}
	for _, n := range nodes {
		if n.owner != "" && n.owner == c.User {
			return true
		}
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if !hasAccess(nodes[i].acls) {
			continue
		}
		return c.granted(nodes[i].acls, right)
	}
	return false
}

func hasAccess(acls []*stratov1.AclRecord) bool {
	for _, a := range acls {
		if a.GetScope() == stratov1.AclScope_ACL_ACCESS {
			return true
		}
	}
	return false
}

// granted reports whether an ACCESS entry of acls matching c grants right.
func (c *Caller) granted(acls []*stratov1.AclRecord, right uint32) bool {
	var have uint32
	for _, a := range acls {
		if a.GetScope() != stratov1.AclScope_ACL_ACCESS {
			continue
		}
		switch a.GetType() {
		case stratov1.AclType_ACL_USER:
			if a.GetName() != c.User {
				continue
			}
		case stratov1.AclType_ACL_GROUP:
			if !slices.Contains(c.Groups, a.GetName()) {
				continue
			}
		case stratov1.AclType_ACL_WORLD:
		default:
			continue
		}
		have |= a.GetRights()
	}
	return have&right == right
}

// check returns ErrPermissionDenied unless c has right on nodes (nil c:
// no authorization).
func (c *Caller) check(nodes []aclNode, right uint32) error {
	if c == nil || c.decide(nodes, right) {
		return nil
	}
	where := "/"
	if len(nodes) > 0 {
		where = nodes[len(nodes)-1].path
	}
	return c.denied(RightsString(right), where)
}

func (c *Caller) denied(what, where string) error {
	return fmt.Errorf("%w: user %s lacks %s on %s", ErrPermissionDenied, c.User, what, where)
}

// ---- the chain of an object ---------------------------------------------------

// aclChain is the chain of objects from a volume down to an object, as far
// as the object's path exists.
type aclChain struct {
	nodes []aclNode
	// found: the last node is the object named.
	found bool
	// dir: the object found is a directory (FSO) or a bucket.
	dir bool
}

// parent is the chain without the object (when found).
func (ch aclChain) parent() []aclNode {
	if ch.found && len(ch.nodes) > 0 {
		return ch.nodes[:len(ch.nodes)-1]
	}
	return ch.nodes
}

// volumeNode reads a volume; a missing one is ErrVolumeNotFound.
func volumeNode(r pebble.Reader, volume string) (aclNode, error) {
	v := &stratov1.VolumeRecord{}
	if ok, err := get(r, volumeKey(nil, volume), v); err != nil {
		return aclNode{}, err
	} else if !ok {
		return aclNode{}, fmt.Errorf("%w: %s", ErrVolumeNotFound, volume)
	}
	return aclNode{path: "/" + volume, owner: v.Owner, acls: v.Acls}, nil
}

// chain returns the chain of the object kind names. A missing volume or
// bucket is an error; a missing key, file or directory is not (found is
// false and the chain ends at its nearest existing parent).
func (rd *Reader) chain(kind stratov1.AclObjectKind, volume, bucket, key string) (aclChain, error) {
	vn, err := volumeNode(rd.r, volume)
	if err != nil {
		return aclChain{}, err
	}
	ch := aclChain{nodes: []aclNode{vn}, found: true, dir: true}
	if kind == stratov1.AclObjectKind_ACL_OBJECT_VOLUME {
		return ch, nil
	}
	bk, err := rd.bucket(volume, bucket)
	if err != nil {
		return aclChain{}, err
	}
	base := "/" + volume + "/" + bucket
	ch.nodes = append(ch.nodes, aclNode{path: base, owner: bk.Owner, acls: bk.Acls})
	if kind == stratov1.AclObjectKind_ACL_OBJECT_BUCKET {
		return ch, nil
	}
	if !isFSO(bk) {
		p := strings.TrimPrefix(key, "/")
		if p == "" {
			return ch, nil
		}
		ki := &stratov1.KeyRecord{}
		found, err := get(rd.r, childKey(nil, tagKey, bk.Id, p), ki)
		if err != nil {
			return aclChain{}, err
		}
		ch.found, ch.dir = found, false
		if found {
			ch.nodes = append(ch.nodes, aclNode{path: base + "/" + p, owner: ki.Owner, acls: ki.Acls})
		}
		return ch, nil
	}
	p, err := CleanPath(key)
	if err != nil {
		return aclChain{}, err
	}
	id := bk.Id
	for i := 0; i < len(p); {
		j := strings.IndexByte(p[i:], '/')
		if j < 0 {
			j = len(p)
		} else {
			j += i
		}
		name := p[i:j]
		d := &stratov1.DirectoryInfo{}
		found, err := get(rd.r, childKey(nil, tagDir, id, name), d)
		if err != nil {
			return aclChain{}, err
		}
		if found {
			ch.nodes = append(ch.nodes, aclNode{path: base + "/" + p[:j], owner: d.Owner, acls: d.Acls})
			id = d.ObjectId
			i = j + 1
			continue
		}
		ch.found, ch.dir = false, false
		if j == len(p) {
			ki := &stratov1.KeyRecord{}
			if found, err = get(rd.r, childKey(nil, tagFile, id, name), ki); err != nil {
				return aclChain{}, err
			} else if found {
				ch.found = true
				ch.nodes = append(ch.nodes, aclNode{path: base + "/" + p, owner: ki.Owner, acls: ki.Acls})
			}
		}
		return ch, nil
	}
	return ch, nil
}

// authorized checks right on the object (or its nearest existing parent).
// A missing volume or bucket, or a bad path, is not refused here: the
// operation itself reports it.
func (rd *Reader) authorized(c *Caller, kind stratov1.AclObjectKind, volume, bucket, key string, right uint32) error {
	if c == nil || c.Admin {
		return nil
	}
	ch, err := rd.chain(kind, volume, bucket, key)
	if err != nil {
		return ignoreClassed(err)
	}
	return c.check(ch.nodes, right)
}

// ignoreClassed drops the errors a request's own checks report better.
func ignoreClassed(err error) error {
	if Class(err) != nil {
		return nil
	}
	return err
}

// As returns a Reader whose reads are authorized for c (nil: none are
// checked).
func (rd *Reader) As(c *Caller) *Reader {
	return &Reader{ns: rd.ns, r: rd.r, caller: c}
}

// ---- checks of mutations (Prepare) ---------------------------------------------

const (
	volumeKind = stratov1.AclObjectKind_ACL_OBJECT_VOLUME
	bucketKind = stratov1.AclObjectKind_ACL_OBJECT_BUCKET
	keyKind    = stratov1.AclObjectKind_ACL_OBJECT_KEY
)

// authorize checks that c may make the mutation req (Prepare, on the
// leader, before anything is allocated or proposed).
func (ns *Namespace) authorize(req proto.Message, view pebble.Reader, c *Caller) error {
	if c == nil || c.Admin {
		return nil
	}
	rd := ns.Reader(view)
	switch r := req.(type) {
	case *stratov1.CreateVolumeRequest:
		if ValidateVolumeName(r.GetName()) != nil {
			return nil // Prepare says why
		}
		return c.denied("CREATE", "/ (creating volumes is for administrators)")
	case *stratov1.SetQuotaRequest:
		kind := volumeKind
		if r.GetBucket() != "" {
			kind = bucketKind
		}
		ch, err := rd.chain(kind, r.GetVolume(), r.GetBucket(), "")
		if err != nil {
			return ignoreClassed(err)
		}
		return c.denied("WRITE", ch.nodes[len(ch.nodes)-1].path+" (quotas are for administrators)")
	case *stratov1.UpdateVolumeRequest:
		ch, err := rd.chain(volumeKind, r.GetName(), "", "")
		if err != nil {
			return ignoreClassed(err)
		}
		return c.denied("owner", ch.nodes[len(ch.nodes)-1].path+" (changing an owner is for administrators)")
	case *stratov1.UpdateBucketRequest:
		ch, err := rd.chain(bucketKind, r.GetVolume(), r.GetName(), "")
		if err != nil {
			return ignoreClassed(err)
		}
		if r.GetOwner() != "" && (!ch.found || ch.nodes[len(ch.nodes)-1].owner != r.GetOwner()) {
			return c.denied("owner", ch.nodes[len(ch.nodes)-1].path+" (changing an owner is for administrators)")
		}
		return c.check(ch.nodes, RightWrite)
	case *stratov1.DeleteVolumeRequest:
		return rd.authorized(c, volumeKind, r.GetName(), "", "", RightDelete)
	case *stratov1.CreateBucketRequest:
		return rd.authorized(c, volumeKind, r.GetVolume(), "", "", RightCreate)
	case *stratov1.DeleteBucketRequest:
		return rd.authorized(c, bucketKind, r.GetVolume(), r.GetName(), "", RightDelete)
	case *stratov1.OpenKeyRequest:
		return rd.authorizeCreate(c, r.GetVolume(), r.GetBucket(), r.GetKey())
	case *stratov1.CreateFileRequest:
		return rd.authorizeCreate(c, r.GetVolume(), r.GetBucket(), r.GetPath())
	case *stratov1.AllocateBlockRequest:
		return rd.authorizeOpenKey(c, r.GetOpenId())
	case *stratov1.CommitKeyRequest:
		if len(r.GetCreateToken()) > 0 {
			oc, err := createToken(&stratov1.CommitKeyCommand{Volume: r.GetVolume(), Bucket: r.GetBucket(), Key: r.GetKey(),
				OpenId: r.GetOpenId(), Hsync: r.GetHsync(), CreateToken: r.GetCreateToken()})
			if err != nil {
				return nil // Prepare says why
			}
			if oc.GetOwner() != c.User {
				return c.denied("WRITE", fmt.Sprintf("a create token of %s", oc.GetOwner()))
			}
			if err := rd.authorizeCreate(c, oc.GetVolume(), oc.GetBucket(), oc.GetKey()); err != nil {
				return err
			}
		} else if err := rd.authorizeOpenKey(c, r.GetOpenId()); err != nil {
			return err
		}
		for _, s := range r.GetSources() {
			if err := rd.authorized(c, keyKind, s.GetVolume(), s.GetBucket(), s.GetKey(), RightRead|RightDelete); err != nil {
				return err
			}
		}
		return nil
	case *stratov1.DeleteKeyRequest:
		return rd.authorized(c, keyKind, r.GetVolume(), r.GetBucket(), r.GetKey(), RightDelete)
	case *stratov1.DeleteRequest:
		return rd.authorized(c, keyKind, r.GetVolume(), r.GetBucket(), r.GetPath(), RightDelete)
	case *stratov1.RenameKeyRequest:
		return rd.authorizeRename(c, r.GetVolume(), r.GetBucket(), r.GetFromKey(), r.GetToKey(), false)
	case *stratov1.RenameRequest:
		return rd.authorizeRename(c, r.GetVolume(), r.GetBucket(), r.GetSrc(), r.GetDst(), true)
	case *stratov1.CreateDirectoryRequest:
		return rd.authorizeCreate(c, r.GetVolume(), r.GetBucket(), r.GetPath())
	case *stratov1.SetPermissionRequest:
		return rd.authorized(c, keyKind, r.GetVolume(), r.GetBucket(), r.GetPath(), RightWriteAcl)
	case *stratov1.SetOwnerRequest:
		ch, err := rd.chain(keyKind, r.GetVolume(), r.GetBucket(), r.GetPath())
		if err != nil {
			return ignoreClassed(err)
		}
		if r.GetOwner() != "" && (!ch.found || ch.nodes[len(ch.nodes)-1].owner != r.GetOwner()) {
			where := ch.nodes[len(ch.nodes)-1].path
			return c.denied("owner", where+" (changing an owner is for administrators)")
		}
		return c.check(ch.nodes, RightWriteAcl)
	case *stratov1.SetTimesRequest:
		return rd.authorized(c, keyKind, r.GetVolume(), r.GetBucket(), r.GetPath(), RightWrite)
	case *stratov1.AppendFileRequest, *stratov1.TruncateRequest, *stratov1.ConcatRequest, *stratov1.RecoverLeaseRequest:
		return rd.authorizeAppend(c, req)
	case *stratov1.SetObjectLockRequest:
		return rd.authorized(c, keyKind, r.GetVolume(), r.GetBucket(), r.GetKey(), RightWrite)
	case *stratov1.SetAttributesRequest:
		if r.GetKey() == "" {
			return rd.authorized(c, bucketKind, r.GetVolume(), r.GetBucket(), "", rd.bucketAttributesRight(r))
		}
		return rd.authorized(c, keyKind, r.GetVolume(), r.GetBucket(), r.GetKey(), RightWrite)
	case *stratov1.SetAclRequest:
		return rd.authorizeAcl(c, r.GetObject(), RightWriteAcl)
	case *stratov1.AddAclRequest:
		return rd.authorizeAcl(c, r.GetObject(), RightWriteAcl)
	case *stratov1.RemoveAclRequest:
		return rd.authorizeAcl(c, r.GetObject(), RightWriteAcl)
	case *stratov1.CreateSnapshotRequest:
		return rd.authorizeSnapshot(c, r.GetVolume(), r.GetBucket())
	case *stratov1.DeleteSnapshotRequest:
		return rd.authorizeSnapshot(c, r.GetVolume(), r.GetBucket())
	case *stratov1.RenameSnapshotRequest:
		return rd.authorizeSnapshot(c, r.GetVolume(), r.GetBucket())
	}
	// The users' and S3 keys' requests: the server checks them
	// (meta/auth.go).
	return nil
}

// authorizeSnapshot lets a bucket's owner (and administrators) take,
// delete and rename its snapshots, as Ozone does.
func (rd *Reader) authorizeSnapshot(c *Caller, volume, bucket string) error {
	ch, err := rd.chain(bucketKind, volume, bucket, "")
	if err != nil {
		return ignoreClassed(err)
	}
	n := ch.nodes[len(ch.nodes)-1]
	if ch.found && n.owner == c.User {
		return nil
	}
	return c.denied("owner", n.path+" (snapshots are for the bucket's owner and administrators)")
}

func (rd *Reader) authorizeAcl(c *Caller, o *stratov1.AclObject, right uint32) error {
	return rd.authorized(c, o.GetKind(), o.GetVolume(), o.GetBucket(), o.GetKey(), right)
}

// authorizeCreate checks a create of a key, file or directory: CREATE on
// its nearest existing parent and, when it exists (an overwrite), WRITE on
// it.
func (rd *Reader) authorizeCreate(c *Caller, volume, bucket, key string) error {
	ch, err := rd.chain(keyKind, volume, bucket, key)
	if err != nil {
		return ignoreClassed(err)
	}
	if err := c.check(ch.parent(), RightCreate); err != nil {
		return err
	}
	if ch.found && !ch.dir {
		return c.check(ch.nodes, RightWrite)
	}
	return nil
}

// authorizeRename checks DELETE on the source and CREATE on the
// destination's nearest existing parent (the destination itself when it
// is a directory src moves into).
func (rd *Reader) authorizeRename(c *Caller, volume, bucket, src, dst string, into bool) error {
	if err := rd.authorized(c, keyKind, volume, bucket, src, RightDelete); err != nil {
		return err
	}
	ch, err := rd.chain(keyKind, volume, bucket, dst)
	if err != nil {
		return ignoreClassed(err)
	}
	if into && ch.found && ch.dir {
		return c.check(ch.nodes, RightCreate)
	}
	return c.check(ch.parent(), RightCreate)
}

// authorizeOpenKey lets the user who opened a key write it.
func (rd *Reader) authorizeOpenKey(c *Caller, id uint64) error {
	rec, err := rd.OpenKey(id)
	if err != nil {
		return ignoreClassed(err)
	}
	if rec.GetOwner() == c.User {
		return nil
	}
	return c.denied("WRITE", fmt.Sprintf("/%s/%s/%s (open key %d of %s)", rec.Volume, rec.Bucket, rec.Key, id, rec.GetOwner()))
}

// own makes the caller the owner of what cmd creates: an administrator may
// name another owner, anyone else owns what it creates.
func own(cmd *stratov1.NamespaceCommand, c *Caller) {
	if c == nil {
		return
	}
	set := func(owner *string) {
		if !c.Admin || *owner == "" {
			*owner = c.User
		}
	}
	switch op := cmd.Op.(type) {
	case *stratov1.NamespaceCommand_CreateVolume:
		set(&op.CreateVolume.Owner)
	case *stratov1.NamespaceCommand_CreateBucket:
		set(&op.CreateBucket.Owner)
	case *stratov1.NamespaceCommand_OpenKey:
		set(&op.OpenKey.Owner)
	case *stratov1.NamespaceCommand_CreateDirectory:
		set(&op.CreateDirectory.Owner)
	}
}

// ---- reads ------------------------------------------------------------------

// GetAcl returns an object's owner and ACL (READ_ACL).
func (rd *Reader) GetAcl(req *stratov1.GetAclRequest) (*stratov1.GetAclResponse, error) {
	o := req.GetObject()
	if err := validAclObject(o); err != nil {
		return nil, err
	}
	ch, err := rd.chain(o.GetKind(), o.GetVolume(), o.GetBucket(), o.GetKey())
	if err != nil {
		return nil, err
	}
	if err := rd.caller.check(ch.nodes, RightReadAcl); err != nil {
		return nil, err
	}
	if !ch.found {
		return nil, fmt.Errorf("%w: /%s/%s/%s", ErrKeyNotFound, o.GetVolume(), o.GetBucket(), o.GetKey())
	}
	n := ch.nodes[len(ch.nodes)-1]
	return &stratov1.GetAclResponse{Owner: n.owner, Acls: AclInfos(n.acls)}, nil
}

// mayListVolume: what ListVolumes shows a caller.
func (c *Caller) mayListVolume(v *stratov1.VolumeRecord) bool {
	n := []aclNode{{owner: v.Owner, acls: v.Acls}}
	return c == nil || c.decide(n, RightList) || c.decide(n, RightRead)
}

// ---- the model: validation, conversion, edits, inheritance ----------------------

func validAclObject(o *stratov1.AclObject) error {
	switch o.GetKind() {
	case volumeKind:
		return ValidateVolumeName(o.GetVolume())
	case bucketKind, keyKind:
		if err := ValidateVolumeName(o.GetVolume()); err != nil {
			return err
		}
		return ValidateBucketName(o.GetBucket())
	}
	return fmt.Errorf("%w: ACL object kind %v", ErrInvalid, o.GetKind())
}

// AclRecords validates ACL entries (a known type; a name for a user or a
// group, none for the world; rights within ALL) and returns their records,
// scope ACCESS when unspecified, entries of the same type, name and scope
// merged, in a canonical order.
func AclRecords(acls []*stratov1.Acl) ([]*stratov1.AclRecord, error) {
	out := make([]*stratov1.AclRecord, 0, len(acls))
	for _, a := range acls {
		r := &stratov1.AclRecord{Type: a.GetType(), Name: a.GetName(), Rights: a.GetRights(), Scope: a.GetScope()}
		if r.Scope == stratov1.AclScope_ACL_SCOPE_UNSPECIFIED {
			r.Scope = stratov1.AclScope_ACL_ACCESS
		}
		if err := validAcl(r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return mergeAcls(out, nil, stratov1.AclEdit_ACL_EDIT_ADD)
}

func validAcl(r *stratov1.AclRecord) error {
	switch r.GetType() {
	case stratov1.AclType_ACL_USER, stratov1.AclType_ACL_GROUP:
		if err := ValidateUserName("ACL name", r.GetName()); err != nil {
			return err
		}
	case stratov1.AclType_ACL_WORLD:
		if r.GetName() != "" {
			return fmt.Errorf("%w: a WORLD ACL entry names no one (got %q)", ErrInvalid, r.GetName())
		}
	default:
		return fmt.Errorf("%w: ACL entry type %v", ErrInvalid, r.GetType())
	}
	if r.GetRights()&^RightAll != 0 {
		return fmt.Errorf("%w: ACL rights %#x beyond ALL (%#x)", ErrInvalid, r.GetRights(), RightAll)
	}
	if s := r.GetScope(); s != stratov1.AclScope_ACL_ACCESS && s != stratov1.AclScope_ACL_DEFAULT {
		return fmt.Errorf("%w: ACL scope %v", ErrInvalid, s)
	}
	return nil
}

func aclIdentity(r *stratov1.AclRecord) string {
	return fmt.Sprintf("%d:%s:%d", r.GetType(), r.GetName(), r.GetScope())
}

// mergeAcls edits cur with entries (SET: replaces; ADD: ORs rights into the
// entry of the same type, name and scope, or adds it; REMOVE: clears
// rights, dropping an entry left with none) and returns the result in a
// canonical order (type, name, scope), failing beyond MaxAcls entries.
func mergeAcls(entries, cur []*stratov1.AclRecord, edit stratov1.AclEdit) ([]*stratov1.AclRecord, error) {
	var out []*stratov1.AclRecord
	if edit != stratov1.AclEdit_ACL_EDIT_SET {
		for _, r := range cur {
			out = append(out, proto.Clone(r).(*stratov1.AclRecord))
		}
	}
	index := map[string]*stratov1.AclRecord{}
	for _, r := range out {
		index[aclIdentity(r)] = r
	}
	switch edit {
	case stratov1.AclEdit_ACL_EDIT_SET, stratov1.AclEdit_ACL_EDIT_ADD:
		for _, e := range entries {
			if r := index[aclIdentity(e)]; r != nil {
				r.Rights |= e.GetRights()
				continue
			}
			r := proto.Clone(e).(*stratov1.AclRecord)
			index[aclIdentity(r)] = r
			out = append(out, r)
		}
	case stratov1.AclEdit_ACL_EDIT_REMOVE:
		for _, e := range entries {
			if r := index[aclIdentity(e)]; r != nil {
				r.Rights &^= e.GetRights()
			}
		}
	default:
		return nil, fmt.Errorf("%w: ACL edit %v", ErrInvalid, edit)
	}
	out = slices.DeleteFunc(out, func(r *stratov1.AclRecord) bool { return r.GetRights() == 0 })
	slices.SortFunc(out, func(a, b *stratov1.AclRecord) int {
		if a.Type != b.Type {
			return int(a.Type) - int(b.Type)
		}
		if a.Name != b.Name {
			return strings.Compare(a.Name, b.Name)
		}
		return int(a.Scope) - int(b.Scope)
	})
	if len(out) > MaxAcls {
		return nil, fmt.Errorf("%w: %d ACL entries (at most %d per object)", ErrInvalid, len(out), MaxAcls)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// AclInfos is the API's view of ACL records.
func AclInfos(rs []*stratov1.AclRecord) []*stratov1.Acl {
	if len(rs) == 0 {
		return nil
	}
	out := make([]*stratov1.Acl, len(rs))
	for i, r := range rs {
		out[i] = &stratov1.Acl{Type: r.Type, Name: r.Name, Rights: r.Rights, Scope: r.Scope}
	}
	return out
}

// inherit is the ACL of an object created below one whose ACL is parent:
// the parent's DEFAULT entries, as ACCESS entries and, for a container (a
// bucket, a directory), as DEFAULT entries too.
func inherit(parent []*stratov1.AclRecord, container bool) []*stratov1.AclRecord {
	var out []*stratov1.AclRecord
	for _, r := range parent {
		if r.GetScope() != stratov1.AclScope_ACL_DEFAULT {
			continue
		}
		out = append(out, &stratov1.AclRecord{Type: r.Type, Name: r.Name, Rights: r.Rights, Scope: stratov1.AclScope_ACL_ACCESS})
		if container {
			out = append(out, proto.Clone(r).(*stratov1.AclRecord))
		}
	}
	return out
}

// ---- apply ------------------------------------------------------------------

// dirAcls is the ACL of directory id of bucket bk (the bucket's for its
// root), for what is created in it.
func (a *applier) dirAcls(bk *stratov1.BucketRecord, id uint64) ([]*stratov1.AclRecord, error) {
	if id == bk.Id {
		return bk.Acls, nil
	}
	d, err := a.dirRecord(id)
	return d.GetAcls(), err
}

func aclReply(e stratov1.AclEdit) proto.Message {
	switch e {
	case stratov1.AclEdit_ACL_EDIT_ADD:
		return &stratov1.AddAclResponse{}
	case stratov1.AclEdit_ACL_EDIT_REMOVE:
		return &stratov1.RemoveAclResponse{}
	}
	return &stratov1.SetAclResponse{}
}

// setAcl edits the ACL of a volume, a bucket, a key, a file or a directory.
func (a *applier) setAcl(c *stratov1.SetAclCommand) (proto.Message, error) {
	for _, r := range c.GetAcls() {
		if err := validAcl(r); err != nil {
			return nil, err
		}
	}
	edit := func(cur []*stratov1.AclRecord) ([]*stratov1.AclRecord, error) {
		return mergeAcls(c.GetAcls(), cur, c.GetEdit())
	}
	var err error
	switch c.GetKind() {
	case volumeKind:
		v, err := a.loadVolume(c.GetVolume())
		if err != nil {
			return nil, err
		}
		if v.Acls, err = edit(v.Acls); err != nil {
			return nil, err
		}
		return aclReply(c.GetEdit()), put(a.b, volumeKey(nil, v.Name), v)
	case bucketKind, keyKind:
	default:
		return nil, fmt.Errorf("%w: ACL object kind %v", ErrInvalid, c.GetKind())
	}
	bk, err := a.loadBucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, err
	}
	p := c.GetKey()
	if isFSO(bk) {
		if p, err = CleanPath(p); err != nil {
			return nil, err
		}
	}
	if c.GetKind() == bucketKind || p == "" {
		// Key "": the bucket (an FSO bucket's root directory), as GetAcl.
		if bk.Acls, err = edit(bk.Acls); err != nil {
			return nil, err
		}
		a.removeBucketFromCache(bk.Volume, bk.Name)
		return aclReply(c.GetEdit()), put(a.b, bucketKey(nil, bk.Volume, bk.Name), bk)
	}
	key, d, ki, err := a.locate(bk, p)
	if err != nil {
		return nil, err
	}
	if err := a.beforeRewrite(bk.Id, key, d, ki); err != nil {
		return nil, err
	}
	if d != nil {
		if d.Acls, err = edit(d.Acls); err != nil {
			return nil, err
		}
		return aclReply(c.GetEdit()), put(a.b, key, d)
	}
	if ki.Acls, err = edit(ki.Acls); err != nil {
		return nil, err
	}
	return aclReply(c.GetEdit()), put(a.b, key, ki)
}

// prepareAcl turns SetAcl, AddAcl and RemoveAcl into a command.
func prepareAcl(o *stratov1.AclObject, acls []*stratov1.Acl, e stratov1.AclEdit) (*stratov1.SetAclCommand, error) {
	if err := validAclObject(o); err != nil {
		return nil, err
	}
	if len(acls) > MaxAcls {
		return nil, fmt.Errorf("%w: %d ACL entries (at most %d per object)", ErrInvalid, len(acls), MaxAcls)
	}
	recs, err := AclRecords(acls)
	if err != nil {
		return nil, err
	}
	return &stratov1.SetAclCommand{Kind: o.GetKind(), Volume: o.GetVolume(), Bucket: o.GetBucket(), Key: o.GetKey(),
		Edit: e, Acls: recs}, nil
}
