package condor

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
	"github.com/crosscluster/crosscluster/sweep/internal/atomicfile"
)

// Submit is one HTCondor submit description for a pool without a
// shared file system, as DAG writes it: the vanilla universe, the
// executable transferred with the job, file transfer on (inputs listed,
// outputs transferred back on exit), the resources requested, and one job
// event log. Every path is on the access point; values may use submit
// macros, $(name), defined by the node's VARS.
type Submit struct {
	// Comment is written as the file's first line, after "# ".
	Comment string
	// Executable is the program on the access point, absolute or relative
	// to the directory condor_submit runs in (DAGMan's: the DAG file's
	// directory when condor_submit_dag is run there or with -usedagdir);
	// HTCondor transfers it to the execute point, so it must run there on
	// its own: a static binary (CGO_ENABLED=0 for Go, see CheckStatic).
	Executable string
	Arguments  []string
	// InitialDir is the job's directory on the access point (absolute, or
	// relative like Executable): relative inputs, outputs and logs are
	// there.
	InitialDir string
	// Inputs are transfer_input_files: files and directories, relative to
	// InitialDir or absolute. A file arrives in the job's scratch
	// directory under its base name, a directory (no trailing slash) as a
	// directory of that name.
	Inputs []string
	// Outputs are transfer_output_files: names in the scratch directory,
	// transferred back into InitialDir when the job exits. A listed name
	// the job did not create puts the job on hold, so list directories
	// that come with the input and always exist.
	Outputs []string
	// Environment is the job's environment, NAME=value (the value without
	// spaces or quotes).
	Environment []string
	// Resources: request_cpus, request_memory (MiB), request_disk (KiB
	// from DiskMB), request_gpus when positive; zero CPUs, memory or disk
	// mean 1, 1024 MiB and 1024 MiB.
	Resources sweep.Resources
	// Log is the job event log; Output and Error the standard streams
	// (relative to InitialDir).
	Log, Output, Error string
	// AllowedJobDuration, when positive, is allowed_job_duration (whole
	// seconds, rounded up): the longest time the job may stay in the
	// running state; a job that runs longer is put on hold (hold code 46).
	// HTCondor 9.3.1 and later; the counterpart of Slurm's --time.
	AllowedJobDuration time.Duration
	// AccountingGroup, when set, is accounting_group: the accounting
	// group the job negotiates under (its AcctGroup), HTCondor's
	// counterpart of a Slurm account for fair share.
	AccountingGroup string
	// RemoveHeldAfter, when positive, adds a periodic_remove of the job
	// once it has been on hold (JobStatus 5) longer than that (whole
	// seconds, rounded up; the schedd evaluates it every 60 s by default).
	// A job on hold, over its memory or allowed_job_duration for example,
	// otherwise stays in the queue for good and its DAG node never ends;
	// removed, the node fails and DAGMan's RETRY applies.
	RemoveHeldAfter time.Duration
	// Extra are further submit commands, name and value, written in order
	// after the others: what a pool asks for (+ProjectName, requirements,
	// container_image, accounting_group, retry_request_memory, ...) or a
	// job needs (checkpoint_exit_code, transfer_checkpoint_files). A name
	// is a submit command name, +Attr or MY.Attr; a value is one line; a
	// command Submit writes itself (executable, arguments, output, log,
	// request_memory, ...) is refused, as is a name given twice (HTCondor
	// would keep the last silently).
	Extra [][2]string
}

// seconds rounds d up to whole seconds.
func seconds(d time.Duration) int64 { return int64((d + time.Second - 1) / time.Second) }

// Node is one node of a DAG.
type Node struct {
	Name   string
	Submit string // path of its submit description file
	// Vars define the node's submit macros (DAGMan VARS), in order.
	Vars [][2]string
	// Retry is the node's RETRY count; UnlessExit, when not zero, stops
	// retrying when the node ends with that exit value (RETRY ...
	// UNLESS-EXIT).
	Retry, UnlessExit int
	// Post, when set, is the node's POST script (SCRIPT POST): a command
	// run on the access point after the job, whose exit status decides the
	// node's success. Arguments may use DAGMan's script macros ($RETURN,
	// $JOB, $RETRY, $MAX_RETRIES).
	Post []string
	// Parents are the nodes that must succeed first (PARENT ... CHILD).
	Parents []string
}

// DAG is a DAGMan input file and its submit descriptions.
type DAG struct {
	Nodes []Node
	// Submits maps each submit file path the nodes name to its
	// description.
	Submits map[string]*Submit
}

// ErrInvalid is wrapped by the errors of DAG, internal/dagman.Run and
// CheckStatic.
var ErrInvalid = errors.New("invalid HTCondor input")

var (
	condorName  = regexp.MustCompile(`^[A-Za-z0-9_.+-]+$`)
	condorValue = regexp.MustCompile(`^[^\s"',=]+$`) // a path or word in a comma- or space-separated list
	condorMacro = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// dollarsOK reports whether every $ in v starts a macro reference that
// HTCondor expands as intended: $(name) with known(name) in submit files
// and VARS values (paren true), $NAME with known(NAME) followed by a
// character that cannot continue the name in POST arguments. Any other $,
// in a path for example, would be read as a macro and the path changed.
func dollarsOK(v string, paren bool, known func(string) bool) bool {
	for {
		i := strings.IndexByte(v, '$')
		if i < 0 {
			return true
		}
		v = v[i+1:]
		if paren {
			end := strings.IndexByte(v, ')')
			if !strings.HasPrefix(v, "(") || end < 0 || !known(v[1:end]) {
				return false
			}
			v = v[end+1:]
			continue
		}
		n := 0
		for n < len(v) && (v[n] == '_' || 'A' <= v[n] && v[n] <= 'Z' || 'a' <= v[n] && v[n] <= 'z' || '0' <= v[n] && v[n] <= '9') {
			n++
		}
		if !known(v[:n]) {
			return false
		}
		v = v[n:]
	}
}

// postMacros are the DAGMan script macros a local DAG runner (internal/dagman) expands too.
func postMacro(name string) bool {
	switch name {
	case "JOB", "RETURN", "RETRY", "MAX_RETRIES":
		return true
	}
	return false
}

// varsMacro: DAGMan expands $(JOB) and $(RETRY) in VARS values.
func varsMacro(name string) bool { return name == "JOB" || name == "RETRY" }

// jobMacro: condor_submit expands $(Cluster) and $(Process) (and their
// newer names) to the job's id; internal/dagman does too.
func jobMacro(name string) bool {
	switch name {
	case "Cluster", "ClusterId", "Process", "ProcId":
		return true
	}
	return false
}

// SubmitText returns the submit description, one command per line and a
// final "queue".
func (s *Submit) SubmitText() string {
	var b strings.Builder
	if s.Comment != "" {
		fmt.Fprintf(&b, "# %s\n", s.Comment)
	}
	b.WriteString("universe = vanilla\n")
	fmt.Fprintf(&b, "executable = %s\n", s.Executable)
	b.WriteString("transfer_executable = true\n")
	if len(s.Arguments) > 0 {
		fmt.Fprintf(&b, "arguments = %s\n", condorArgs(s.Arguments))
	}
	fmt.Fprintf(&b, "initialdir = %s\n", s.InitialDir)
	b.WriteString("should_transfer_files = YES\n")
	b.WriteString("when_to_transfer_output = ON_EXIT\n")
	if len(s.Inputs) > 0 {
		fmt.Fprintf(&b, "transfer_input_files = %s\n", strings.Join(s.Inputs, ", "))
	}
	if len(s.Outputs) > 0 {
		fmt.Fprintf(&b, "transfer_output_files = %s\n", strings.Join(s.Outputs, ", "))
	}
	fmt.Fprintf(&b, "output = %s\n", s.Output)
	fmt.Fprintf(&b, "error = %s\n", s.Error)
	fmt.Fprintf(&b, "log = %s\n", s.Log)
	if len(s.Environment) > 0 {
		fmt.Fprintf(&b, "environment = \"%s\"\n", strings.Join(s.Environment, " "))
	}
	r := over(poolDefaults, s.Resources)
	fmt.Fprintf(&b, "request_cpus = %d\n", r.CPUs)
	fmt.Fprintf(&b, "request_memory = %d\n", r.MemoryMB)
	fmt.Fprintf(&b, "request_disk = %d\n", r.DiskMB*1024)
	if r.GPUs > 0 {
		fmt.Fprintf(&b, "request_gpus = %d\n", r.GPUs)
	}
	if s.AllowedJobDuration > 0 {
		fmt.Fprintf(&b, "allowed_job_duration = %d\n", seconds(s.AllowedJobDuration))
	}
	if s.AccountingGroup != "" {
		fmt.Fprintf(&b, "accounting_group = %s\n", s.AccountingGroup)
	}
	if s.RemoveHeldAfter > 0 {
		fmt.Fprintf(&b, "periodic_remove = JobStatus == 5 && time() - EnteredCurrentStatus > %d\n", seconds(s.RemoveHeldAfter))
	}
	for _, kv := range s.Extra {
		fmt.Fprintf(&b, "%s = %s\n", kv[0], kv[1])
	}
	b.WriteString("queue\n")
	return b.String()
}

// check refuses what the submit language cannot carry as written: list
// items with spaces, commas or quotes, environment values with spaces, and
// a $ anywhere but in $(name) for a macro in vars (the VARS of the nodes
// that use the file) or DAGMan's $(JOB) and $(RETRY), which internal/dagman
// also expands: HTCondor would expand any other.
func (s *Submit) check(path string, vars map[string]bool) error {
	bad := func(what, v string) error {
		return fmt.Errorf("condor: %w: %s: %s %q cannot be written in a submit file", ErrInvalid, path, what, v)
	}
	known := func(name string) bool { return vars[name] || varsMacro(name) || jobMacro(name) }
	for _, v := range slices.Concat([]string{s.Executable, s.InitialDir, s.Log, s.Output, s.Error}, s.Inputs, s.Outputs, s.Arguments, s.Environment) {
		if !dollarsOK(v, true, known) {
			return fmt.Errorf("condor: %w: %s: %q holds a $ that is not a node macro $(name); HTCondor would expand it (rename the path without $)", ErrInvalid, path, v)
		}
	}
	if !condorValue.MatchString(s.Executable) {
		return bad("executable (a path without spaces)", s.Executable)
	}
	for _, v := range []string{s.InitialDir, s.Log, s.Output, s.Error} {
		if !condorValue.MatchString(v) {
			return bad("path", v)
		}
	}
	for _, v := range append(append([]string(nil), s.Inputs...), s.Outputs...) {
		if !condorValue.MatchString(v) {
			return bad("transfer list item", v)
		}
	}
	for _, v := range s.Outputs {
		if strings.Contains(v, "/") {
			return bad("output (a name in the scratch directory)", v)
		}
	}
	for _, a := range s.Arguments {
		if strings.ContainsAny(a, "\n\r") {
			return bad("argument", a)
		}
	}
	for _, kv := range s.Environment {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !condorMacro.MatchString(k) || !condorValue.MatchString(v) {
			return bad("environment entry", kv)
		}
	}
	if s.AccountingGroup != "" && !condorName.MatchString(s.AccountingGroup) {
		return bad("accounting group (letters, digits, _ . + -)", s.AccountingGroup)
	}
	if s.AllowedJobDuration < 0 || s.RemoveHeldAfter < 0 {
		return fmt.Errorf("condor: %w: %s: negative allowed_job_duration or hold limit", ErrInvalid, path)
	}
	return s.checkExtra(path)
}

// ownedCommands are the submit commands SubmitText writes (and their
// spellings HTCondor reads the same): Extra may not set them, since a
// second definition would silently replace the first. accounting_group,
// allowed_job_duration and periodic_remove are owned only when their field
// is set.
var ownedCommands = map[string]bool{
	"universe": true, "executable": true, "transfer_executable": true, "arguments": true, "args": true,
	"initialdir": true, "initial_dir": true, "should_transfer_files": true, "when_to_transfer_output": true,
	"transfer_input_files": true, "transfer_output_files": true, "output": true, "error": true, "log": true,
	"environment": true, "env": true, "request_cpus": true, "request_memory": true, "request_disk": true,
	"request_gpus": true, "queue": true,
}

// extraName is a submit command or a job attribute (+Name, MY.Name).
var extraName = regexp.MustCompile(`^(\+|(?i:my)\.)?[A-Za-z_][A-Za-z0-9_.]*$`)

// checkExtra checks Extra: names a submit file can carry, one-line values,
// no command the description owns and no name twice.
func (s *Submit) checkExtra(path string) error {
	seen := map[string]bool{}
	for _, kv := range s.Extra {
		k, v := kv[0], kv[1]
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "+") {
			lk = "my." + lk[1:] // +Name and MY.Name are one attribute
		}
		owned := ownedCommands[lk] || lk == "accounting_group" && s.AccountingGroup != "" ||
			lk == "allowed_job_duration" && s.AllowedJobDuration > 0 || lk == "periodic_remove" && s.RemoveHeldAfter > 0
		switch {
		case !extraName.MatchString(k):
			return fmt.Errorf("condor: %w: %s: extra submit command %q: not a command name (letters, digits, _ and ., or +Attr, MY.Attr)", ErrInvalid, path, k)
		case owned:
			return fmt.Errorf("condor: %w: %s: extra submit command %q: the description writes %s itself; set it through its own field", ErrInvalid, path, k, k)
		case seen[lk]:
			return fmt.Errorf("condor: %w: %s: extra submit command %q given twice", ErrInvalid, path, k)
		case strings.TrimSpace(v) == "" || strings.ContainsAny(v, "\n\r\x00"):
			return fmt.Errorf("condor: %w: %s: extra submit command %s: value %q must be one non-empty line", ErrInvalid, path, k, v)
		}
		seen[lk] = true
	}
	return nil
}

// DAGText returns the DAGMan input file: for each node its JOB, VARS,
// SCRIPT POST and RETRY lines, then the PARENT ... CHILD lines.
func (d *DAG) DAGText() string {
	var b strings.Builder
	for _, n := range d.Nodes {
		fmt.Fprintf(&b, "JOB %s %s\n", n.Name, n.Submit)
		if len(n.Vars) > 0 {
			fmt.Fprintf(&b, "VARS %s", n.Name)
			for _, kv := range n.Vars {
				fmt.Fprintf(&b, " %s=\"%s\"", kv[0], kv[1])
			}
			b.WriteString("\n")
		}
		if len(n.Post) > 0 {
			fmt.Fprintf(&b, "SCRIPT POST %s %s\n", n.Name, strings.Join(n.Post, " "))
		}
		if n.Retry > 0 {
			fmt.Fprintf(&b, "RETRY %s %d", n.Name, n.Retry)
			if n.UnlessExit != 0 {
				fmt.Fprintf(&b, " UNLESS-EXIT %d", n.UnlessExit)
			}
			b.WriteString("\n")
		}
	}
	for _, n := range d.Nodes {
		if len(n.Parents) > 0 {
			fmt.Fprintf(&b, "PARENT %s CHILD %s\n", strings.Join(n.Parents, " "), n.Name)
		}
	}
	return b.String()
}

// check validates the DAG: unique node names that DAGMan accepts, known
// parents and submit files, no cycle, values the files can carry.
func (d *DAG) check() error {
	seen := map[string]bool{}
	for _, n := range d.Nodes {
		switch {
		case !condorName.MatchString(n.Name):
			return fmt.Errorf("condor: %w: node name %q", ErrInvalid, n.Name)
		case seen[n.Name]:
			return fmt.Errorf("condor: %w: two nodes named %s", ErrInvalid, n.Name)
		case d.Submits[n.Submit] == nil:
			return fmt.Errorf("condor: %w: node %s: no submit description for %s", ErrInvalid, n.Name, n.Submit)
		case !condorValue.MatchString(n.Submit):
			return fmt.Errorf("condor: %w: node %s: submit file %q (a path without spaces)", ErrInvalid, n.Name, n.Submit)
		case n.Retry < 0:
			return fmt.Errorf("condor: %w: node %s: negative retry count", ErrInvalid, n.Name)
		}
		for _, kv := range n.Vars {
			if !condorMacro.MatchString(kv[0]) || strings.ContainsAny(kv[1], "\"\n\\") {
				return fmt.Errorf("condor: %w: node %s: VARS %s=%q", ErrInvalid, n.Name, kv[0], kv[1])
			}
			if !dollarsOK(kv[1], true, varsMacro) {
				return fmt.Errorf("condor: %w: node %s: VARS %s=%q holds a $ other than $(JOB) or $(RETRY); HTCondor would expand it (rename the path without $)", ErrInvalid, n.Name, kv[0], kv[1])
			}
		}
		for _, a := range n.Post {
			if a == "" || strings.ContainsAny(a, " \t\n\"'") {
				return fmt.Errorf("condor: %w: node %s: POST script argument %q", ErrInvalid, n.Name, a)
			}
			if !dollarsOK(a, false, postMacro) {
				return fmt.Errorf("condor: %w: node %s: POST script argument %q holds a $ other than $JOB, $RETURN, $RETRY or $MAX_RETRIES; DAGMan would expand it (rename the path without $)", ErrInvalid, n.Name, a)
			}
		}
		seen[n.Name] = true
	}
	for _, n := range d.Nodes {
		for _, p := range n.Parents {
			if !seen[p] {
				return fmt.Errorf("condor: %w: node %s: unknown parent %s", ErrInvalid, n.Name, p)
			}
		}
	}
	if _, err := dagOrder(d.Nodes); err != nil {
		return err
	}
	vars := map[string]map[string]bool{}
	for _, n := range d.Nodes {
		if vars[n.Submit] == nil {
			vars[n.Submit] = map[string]bool{}
		}
		for _, kv := range n.Vars {
			vars[n.Submit][kv[0]] = true
		}
	}
	for path, s := range d.Submits {
		if err := s.check(path, vars[path]); err != nil {
			return err
		}
	}
	return nil
}

// dagOrder returns the nodes' indices in an order where parents come
// first (Kahn's algorithm, ties in file order), or an error naming a node
// on a cycle.
func dagOrder(nodes []Node) ([]int, error) {
	idx := map[string]int{}
	for i, n := range nodes {
		idx[n.Name] = i
	}
	indeg := make([]int, len(nodes))
	children := make([][]int, len(nodes))
	for i, n := range nodes {
		for _, p := range n.Parents {
			j, ok := idx[p]
			if !ok {
				return nil, fmt.Errorf("condor: %w: node %s: unknown parent %s", ErrInvalid, n.Name, p)
			}
			indeg[i]++
			children[j] = append(children[j], i)
		}
	}
	var order, ready []int
	for i := range nodes {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		i := ready[0]
		ready = ready[1:]
		order = append(order, i)
		for _, c := range children[i] {
			if indeg[c]--; indeg[c] == 0 {
				ready = append(ready, c)
			}
		}
	}
	if len(order) != len(nodes) {
		for i := range nodes {
			if indeg[i] > 0 {
				return nil, fmt.Errorf("condor: %w: node %s is on a dependency cycle", ErrInvalid, nodes[i].Name)
			}
		}
	}
	return order, nil
}

// Order returns the indices of d's nodes in an order where parents come
// first (ties in node order), or an error wrapping ErrInvalid naming an
// unknown parent or a node on a cycle.
func (d *DAG) Order() ([]int, error) { return dagOrder(d.Nodes) }

// Check checks the DAG as Write does, without writing anything: node
// names, parents, cycles, and every value the files must carry (spaces,
// quotes, a $ that HTCondor would expand).
func (d *DAG) Check() error { return d.check() }

// Write checks the DAG and writes every submit description and the DAG
// file at path, each atomically, the DAG file last. A relative submit
// file path is relative to path's directory, where DAGMan runs.
func (d *DAG) Write(path string) error {
	if err := d.check(); err != nil {
		return err
	}
	for p, s := range d.Submits {
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		if err := writeAtomic(p, []byte(s.SubmitText())); err != nil {
			return err
		}
	}
	return writeAtomic(path, []byte(d.DAGText()))
}

func writeAtomic(path string, b []byte) error {
	if err := atomicfile.Write(path, b, true); err != nil {
		return fmt.Errorf("condor: %w", err)
	}
	return nil
}

// condorArgs quotes argv in HTCondor's "new" arguments syntax: the whole
// value in double quotes, each argument in single quotes, ' doubled and "
// doubled.
func condorArgs(argv []string) string {
	var parts []string
	for _, a := range argv {
		a = strings.ReplaceAll(a, `"`, `""`)
		parts = append(parts, "'"+strings.ReplaceAll(a, "'", "''")+"'")
	}
	return `"` + strings.Join(parts, " ") + `"`
}

// poolDefaults are the requests of a job that asks for nothing: HTCondor
// pools want request_cpus, request_memory and request_disk on every job.
var poolDefaults = sweep.Resources{CPUs: 1, MemoryMB: 1024, DiskMB: 1024}

// over returns r with the non-zero fields of o.
func over(r, o sweep.Resources) sweep.Resources {
	r.CPUs = cmp.Or(o.CPUs, r.CPUs)
	r.GPUs = cmp.Or(o.GPUs, r.GPUs)
	r.MemoryMB = cmp.Or(o.MemoryMB, r.MemoryMB)
	r.DiskMB = cmp.Or(o.DiskMB, r.DiskMB)
	r.Time = cmp.Or(o.Time, r.Time)
	r.Partition = cmp.Or(o.Partition, r.Partition)
	r.Account = cmp.Or(o.Account, r.Account)
	return r
}
