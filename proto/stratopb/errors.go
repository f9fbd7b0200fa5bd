package stratopb

// Error details shared by meta and its clients. Every error meta returns is
// a gRPC status; when meta knows which rule failed it attaches an
// errdetails.ErrorInfo of domain ErrorDomain whose Reason is one of the
// constants below (clients map them to their own errors: client/errors.go).
// A meta replica that is not the leader answers Unavailable with reason
// NotLeaderReason, whose metadata "leader" holds the leader's address when
// it is known. A client must treat an unknown reason, or none, by the
// status code alone.
const (
	ErrorDomain     = "strato.meta"
	NotLeaderReason = "NOT_LEADER"

	// NotFound
	ReasonVolumeNotFound  = "VOLUME_NOT_FOUND"
	ReasonBucketNotFound  = "BUCKET_NOT_FOUND"
	ReasonKeyNotFound     = "KEY_NOT_FOUND"  // a key of an OBS bucket
	ReasonFileNotFound    = "FILE_NOT_FOUND" // a file or directory of an FSO bucket
	ReasonOpenKeyNotFound = "OPEN_KEY_NOT_FOUND"
	ReasonParentNotFound  = "PARENT_NOT_FOUND"
	// AlreadyExists
	ReasonVolumeExists    = "VOLUME_EXISTS"
	ReasonBucketExists    = "BUCKET_EXISTS"
	ReasonKeyExists       = "KEY_EXISTS"
	ReasonFileExists      = "FILE_EXISTS"
	ReasonDirectoryExists = "DIRECTORY_EXISTS"
	// FailedPrecondition
	ReasonVolumeNotEmpty    = "VOLUME_NOT_EMPTY"
	ReasonBucketNotEmpty    = "BUCKET_NOT_EMPTY"
	ReasonDirectoryNotEmpty = "DIRECTORY_NOT_EMPTY"
	ReasonQuotaExceeded     = "QUOTA_EXCEEDED"
	ReasonNotADirectory     = "NOT_A_DIRECTORY"
	ReasonIsADirectory      = "IS_A_DIRECTORY"
	ReasonWrongLayout       = "WRONG_LAYOUT"
	// InvalidArgument
	ReasonRenameUnderSelf = "RENAME_UNDER_SELF"
	ReasonInvalidName     = "INVALID_NAME"
	ReasonInvalidBlocks   = "INVALID_BLOCKS"
	// Unavailable: try again later.
	ReasonSafeMode = "SAFE_MODE"
	// ResourceExhausted
	ReasonNoPipeline = "NO_PIPELINE" // not enough healthy datanodes
	ReasonDiskFull   = "DISK_FULL"   // meta's data directory is under its reserve
)
