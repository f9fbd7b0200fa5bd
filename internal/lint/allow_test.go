package lint

// The exceptions to the house rules, each keyed by "file:Func" (or
// "file:Type.Method", or the file alone where the rule is about the file)
// with its reason. An entry that matches nothing fails its rule's test.

// wallClockAllow: calls of package time's clock that mean real time, in
// the packages of the wall-clock rule. Expiry, liveness and periods read
// the Clock; these measure or bound real work.
var wallClockAllow = map[string]string{
	"meta/batch.go:batchWorkers.loop": "how long an idle goroutine of the batch workers lives: a bound on resources " +
		"held, not a decision; a fake clock would keep the goroutines forever",
	"meta/cluster/replication.go:replicationPass.step": "bounds the real time a step of the pass holds the manager's lock " +
		"(stepTime): CPU spent, not a decision, which reads the pass's now",
	"datanode/handler.go:conn.handle": "a request's latency for the metrics (strato_datanode_request_duration_seconds): " +
		"real time spent, whatever a test's clock says",
	"datanode/replication/reconstruct.go:Reconstruct": "ReconstructStats.Elapsed, the real time an EC rebuild took, for its log line",
	"datanode/server.go:Server.Serve": "the accept loop's back-off on a temporary error (EMFILE), as net/http's: " +
		"it waits for the OS, and a fake clock would stop the listener",
	"datanode/replication/push.go:push": "Stats.Waited and Stats.Elapsed, the real time a copy waited for a slot " +
		"and took, for its log line and MB/s",
	"datanode/replication/push.go:session.call": "a read deadline on the socket: net.Conn deadlines are real time",
	"datanode/replication/push.go:session.sendFile": "a write deadline on the socket: net.Conn deadlines are real time " +
		"(the bandwidth cap, Limits.wait, runs on the Clock)",
	"datanode/replication/push.go:session.cause": "a second's grace for the receiver's error to arrive after a send " +
		"failed: a network wait, real time",
	"datanode/replication/push.go:session.commit": "how long the receiver may take to answer IMPORT_COMMIT " +
		"(10 × IOTimeout): a network timeout, real time",
	"meta/namespaceservice.go:Server.namespaceTick": "the reclaim loop's budget, a fifth of a tick of real work, " +
		"so that a big deleted subtree never stalls clients' writes; expiry reads s.now()",
	"meta/snapshot.go:Server.purgeSnapshots": "the purge loop's budget, a tenth of a tick of real work, " +
		"so that freeing a deleted snapshot never stalls clients' writes (as namespaceTick's reclaim)",
	"meta/server.go:Server.WaitReady": "polls the Raft node (whose ticks are real time) for a leader; " +
		"the caller's ctx bounds it",
	"meta/users.go:Server.bootstrapAuth": "polls for the first leader, which Raft elects in real time, " +
		"to make the first administrator",
}

// osFilePackages: packages that name vfs.FS only to hand one to the
// components they start, and so are not under the os-files rule.
var osFilePackages = map[string]string{
	"minicluster": "the in-process cluster harness: it lays out the cluster's directories, cluster.json, " +
		"certificates and reads admin.token on the OS, and gives each datanode's volumes the FS a test chooses " +
		"(Options.DatanodeFS)",
}

// osFileAlso: packages under the os-files rule although they name no
// vfs.FS themselves.
var osFileAlso = map[string]string{
	"datanode": "its volumes' files go through the store's vfs.FS (StoreOptions.Volume.FS), which a test may " +
		"make an in-memory or faulty one",
}

// osFileAllow: os file calls that must reach the OS, in packages whose
// file I/O otherwise goes through a vfs.FS.
var osFileAllow = map[string]string{
	"datanode/datanode.go:privateDir": "makes the data directory on the OS and sets its mode (700): " +
		"vfs.FS has no Chmod, and local readers' access depends on the real mode",
	"datanode/datanode.go:loadID": "datanode.id, the datanode's identity, lives in the OS directory privateDir " +
		"made, whatever FS a test gives the volumes; tools and tests read it there (bench/gen, test/netfault)",
	"datanode/datanode.go:writeFileAtomic": "writes datanode.id and cluster.id in the OS data directory " +
		"(see loadID), fsyncing the file and the directory",
	"datanode/datanode.go:Datanode.findTokensFiles": "checks the block-token marker (blocktoken.go) in the OS data directory, " +
		"beside datanode.id",
	"datanode/datanode.go:readClusterID": "cluster.id lives in the OS data directory beside datanode.id (see loadID)",
	"datanode/blocktoken.go:Datanode.setBlockTokens": "the block-token marker lives in the OS data directory " +
		"beside datanode.id (see loadID)",
	"datanode/handler_read.go:openExtents": "opens a block's files as *os.File to pass their descriptors to a " +
		"local reader (READ_LOCAL) or sendfile them; only when Store.osFiles, the volumes being on vfs.Default",
	"datanode/replication/push.go:session.sendFile": "opens the block file as *os.File to sendfile it, " +
		"only when Options.FS is vfs.Default (else it goes through the FS)",
	"datanode/container/direct_linux.go:openDirect": "O_DIRECT, which vfs.FS cannot ask for; used only " +
		"when the volume's FS is vfs.Default",
	"datanode/container/recycle.go:openRecycler": "the recycled-files pool exists only on vfs.Default " +
		"(it renames without replacing, which vfs.FS lacks)",
	"datanode/container/recycle.go:recycler.put": "the recycled-files pool exists only on vfs.Default " +
		"(see openRecycler)",
	"datanode/container/recycle.go:recycler.take": "the recycled-files pool exists only on vfs.Default " +
		"(see openRecycler)",
	"meta/users.go:writeSecretFile": "admin.token is a secret for the operator, written 0600 on the OS: " +
		"vfs.FS creates files without a mode",
}

// prometheusAllow: files outside telemetry that import the Prometheus
// client, with the reason. None: cmd/strato makes its registry with
// telemetry.NewRegistry.
var prometheusAllow = map[string]string{}
