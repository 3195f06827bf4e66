package eventlog

import "strconv"

// Code is an HTCondor event number (ULogEventNumber in condor_event.h).
type Code int

// The event numbers HTCondor defines (htcondor/htcondor src/condor_utils/condor_event.h).
const (
	Submit               Code = 0
	Execute              Code = 1
	ExecutableError      Code = 2
	Checkpointed         Code = 3
	Evicted              Code = 4
	Terminated           Code = 5
	ImageSize            Code = 6
	ShadowException      Code = 7
	Generic              Code = 8
	Aborted              Code = 9
	Suspended            Code = 10
	Unsuspended          Code = 11
	Held                 Code = 12
	Released             Code = 13
	NodeExecute          Code = 14
	NodeTerminated       Code = 15
	PostScriptTerminated Code = 16
	GlobusSubmit         Code = 17
	GlobusSubmitFailed   Code = 18
	GlobusResourceUp     Code = 19
	GlobusResourceDown   Code = 20
	RemoteError          Code = 21
	Disconnected         Code = 22
	Reconnected          Code = 23
	ReconnectFailed      Code = 24
	GridResourceUp       Code = 25
	GridResourceDown     Code = 26
	GridSubmit           Code = 27
	JobAdInformation     Code = 28
	StatusUnknown        Code = 29
	StatusKnown          Code = 30
	StageIn              Code = 31
	StageOut             Code = 32
	AttributeUpdate      Code = 33
	PreSkip              Code = 34
	ClusterSubmit        Code = 35
	ClusterRemove        Code = 36
	FactoryPaused        Code = 37
	FactoryResumed       Code = 38
	None                 Code = 39
	FileTransfer         Code = 40
	ReserveSpace         Code = 41
	ReleaseSpace         Code = 42
	FileComplete         Code = 43
	FileUsed             Code = 44
	FileRemoved          Code = 45
	DataflowJobSkipped   Code = 46
	CommonFiles          Code = 47

	EPStartup         Code = 100
	EPReady           Code = 101
	EPReconfig        Code = 102
	EPShutdown        Code = 103
	EPRequestClaim    Code = 104
	EPReleaseClaim    Code = 105
	EPActivateClaim   Code = 106
	EPDeactivateClaim Code = 107
	EPVacateClaim     Code = 108
	EPDrain           Code = 109
	EPResourceBreak   Code = 110
	EPResourceMend    Code = 111
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

// Known reports whether HTCondor defines c (0–47 and 100–111).
func (c Code) Known() bool {
	return (c >= 0 && int(c) < len(codeNames)) || (c >= EPStartup && int(c-EPStartup) < len(epNames))
}

// String returns HTCondor's name for c (ULogEventNumberNames), such as
// "ULOG_JOB_HELD", or "ULOG_UNKNOWN_<n>" for a number HTCondor does not define.
func (c Code) String() string {
	switch {
	case c >= 0 && int(c) < len(codeNames):
		return codeNames[c]
	case c >= EPStartup && int(c-EPStartup) < len(epNames):
		return epNames[c-EPStartup]
	}
	return "ULOG_UNKNOWN_" + strconv.Itoa(int(c))
}
