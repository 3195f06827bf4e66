package eventlog

import "strconv"

// Code is an HTCondor event number (ULogEventNumber in condor_event.h).
type Code int

// The event numbers of a job's life cycle: the ones Job.End, Job.Label and
// Builder read. Every other number HTCondor defines (condor_event.h in
// htcondor/htcondor src/condor_utils) is read the same way, compares as
// Code(n) and prints its HTCondor name with String; the typed accessors
// (ImageSizeInfo, TransferInfo, ...) check the number themselves.
const (
	Submit           Code = 0
	Execute          Code = 1
	Evicted          Code = 4
	Terminated       Code = 5
	Aborted          Code = 9
	Held             Code = 12
	Released         Code = 13
	JobAdInformation Code = 28
)

// The other numbers this package reads.
const (
	codeExecutableError Code = 2
	codeImageSize       Code = 6
	codeShadowException Code = 7
	codeGeneric         Code = 8
	codeSuspended       Code = 10
	codeUnsuspended     Code = 11
	codeNodeTerminated  Code = 15
	codeDisconnected    Code = 22
	codeReconnected     Code = 23
	codeReconnectFailed Code = 24
	codeAttributeUpdate Code = 33
	codeFileTransfer    Code = 40
	epStartup           Code = 100 // ULOG_EP_STARTUP, the first execution-point event
)

var codeNames = [...]string{
	"ULOG_SUBMIT", "ULOG_EXECUTE", "ULOG_EXECUTABLE_ERROR", "ULOG_CHECKPOINTED",
	"ULOG_JOB_EVICTED", "ULOG_JOB_TERMINATED", "ULOG_IMAGE_SIZE", "ULOG_SHADOW_EXCEPTION",
	"ULOG_GENERIC", "ULOG_JOB_ABORTED", "ULOG_JOB_SUSPENDED", "ULOG_JOB_UNSUSPENDED",
	"ULOG_JOB_HELD", "ULOG_JOB_RELEASED", "ULOG_NODE_EXECUTE", "ULOG_NODE_TERMINATED",
	"ULOG_POST_SCRIPT_TERMINATED", "ULOG_GLOBUS_SUBMIT", "ULOG_GLOBUS_SUBMIT_FAILED",
	"ULOG_GLOBUS_RESOURCE_UP", "ULOG_GLOBUS_RESOURCE_DOWN", "ULOG_REMOTE_ERROR",
	"ULOG_JOB_DISCONNECTED", "ULOG_JOB_RECONNECTED", "ULOG_JOB_RECONNECT_FAILED",
	"ULOG_GRID_RESOURCE_UP", "ULOG_GRID_RESOURCE_DOWN", "ULOG_GRID_SUBMIT",
	"ULOG_JOB_AD_INFORMATION", "ULOG_JOB_STATUS_UNKNOWN", "ULOG_JOB_STATUS_KNOWN",
	"ULOG_JOB_STAGE_IN", "ULOG_JOB_STAGE_OUT", "ULOG_ATTRIBUTE_UPDATE", "ULOG_PRESKIP",
	"ULOG_CLUSTER_SUBMIT", "ULOG_CLUSTER_REMOVE", "ULOG_FACTORY_PAUSED",
	"ULOG_FACTORY_RESUMED", "ULOG_NONE", "ULOG_FILE_TRANSFER", "ULOG_RESERVE_SPACE",
	"ULOG_RELEASE_SPACE", "ULOG_FILE_COMPLETE", "ULOG_FILE_USED", "ULOG_FILE_REMOVED",
	"ULOG_DATAFLOW_JOB_SKIPPED", "ULOG_COMMON_FILES",
}

var epNames = [...]string{
	"ULOG_EP_STARTUP", "ULOG_EP_READY", "ULOG_EP_RECONFIG", "ULOG_EP_SHUTDOWN",
	"ULOG_EP_REQUEST_CLAIM", "ULOG_EP_RELEASE_CLAIM", "ULOG_EP_ACTIVATE_CLAIM",
	"ULOG_EP_DEACTIVATE_CLAIM", "ULOG_EP_VACATE_CLAIM", "ULOG_EP_DRAIN",
	"ULOG_EP_RESOURCE_BREAK", "ULOG_EP_RESOURCE_MEND",
}

// known reports whether HTCondor defines c (0–47 and 100–111).
func (c Code) known() bool {
	return (c >= 0 && int(c) < len(codeNames)) || (c >= epStartup && int(c-epStartup) < len(epNames))
}

// String returns HTCondor's name for c (ULogEventNumberNames), such as
// "ULOG_JOB_HELD", or "ULOG_UNKNOWN_<n>" for a number HTCondor does not define.
func (c Code) String() string {
	switch {
	case c >= 0 && int(c) < len(codeNames):
		return codeNames[c]
	case c >= epStartup && int(c-epStartup) < len(epNames):
		return epNames[c-epStartup]
	}
	return "ULOG_UNKNOWN_" + strconv.Itoa(int(c))
}
