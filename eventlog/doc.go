// Package eventlog reads HTCondor job event logs and turns the histories of
// held jobs into tensors for a sequence classifier.
//
// # Reading
//
// NewReader streams events from a user log or a schedd's global event log in
// HTCondor's classic text format ("NNN (cluster.proc.subproc) date time
// text", body lines, "..."), or in the JSON format; Read returns io.EOF at
// the end and a *ParseError, naming the line and what was expected, on bad
// input, after which it resumes at the next event. Options.Lenient skips
// damaged events and counts them. Event keeps each event's text (Body) and
// parses typed fields on demand (HoldInfo, TerminateInfo, EvictInfo, ...),
// following the writers in htcondor/htcondor src/condor_utils/condor_event.cpp.
//
// Dates without a year ("MM/DD HH:MM:SS", the format before HTCondor 8.8's
// ISO dates) start from Options.Year, a global-log header's ctime, or the
// file time; each later one takes the year that puts it nearest the log's
// running clock, so late writes around New Year keep their own year and
// 02/29 finds its leap year. HTCondor itself uses the
// current year (ULogEvent::readHeader), which misdates old logs; we keep
// absolute times because the tensors compare times across midnight and New
// Year, where the published pipeline compared seconds of the day.
//
// Global event logs: SortRotated orders rotated files oldest first, Files
// reads a set as one stream with the events repeated at file boundaries
// removed (a "Global JobLog:" header's ctime dates the yearless events
// after it), and Options.FoldJobAds folds the 028 events that
// EVENT_LOG_JOB_AD_INFORMATION_ATTRS adds after every event into the
// events they follow. Follow reads a log as a writer appends and rotates it.
//
// # Jobs and labels
//
// Group gathers events into per-job histories (Job) keyed by an optional
// source tag and cluster.proc.subproc. Job.Holds, Job.End and Job.Times
// describe the life cycle; Job.Label says whether a held job was released
// (and then finished normally) or removed.
//
// # Tensors and datasets
//
// Builder makes one Sample per labelled held job: J jobs × M frames × E event
// types, one-hot, layout (j, m, e), with Sample.Seq giving the (m, j·e)
// sequence a recurrent model reads. Its SeedCompat mode reproduces the
// published pipeline's framing. WriteDataset and ReadDataset store samples
// as NumPy .npz files; Split makes a seeded train/validate/test split.
package eventlog
