package s3

// SetAfterDeleteCheck sets the function a conditional DeleteObject runs
// between its check and its delete (nil: none), for the tests of its
// atomicity.
func SetAfterDeleteCheck(g *Gateway, f func()) { g.afterDeleteCheck = f }

// SetAfterPutCheck sets the function a conditional PutObject or
// CompleteMultipartUpload runs between its check and its commit (nil:
// none).
func SetAfterPutCheck(g *Gateway, f func()) { g.afterPutCheck = f }
