package run

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/koopq/koopq/internal/atomicfile"
	"github.com/koopq/koopq/internal/lockfile"
	"github.com/koopq/koopq/internal/regfile"
	"github.com/koopq/koopq/rundir"
)

// Dir is one run's directory:
//
//	config.json                     the full configuration (rewritten only when --steps extends the run)
//	metrics.jsonl, metrics.csv      one row per log step (both rebuilt from their union on resume)
//	history.json                    the evaluations so far
//	checkpoints/latest.safetensors  the full training state (atomic, only finite weights)
//	koopman.safetensors             the Koopman model, when the run trained one
//	policy.safetensors              the final actor, for koopq eval
//	results.json                    final numbers with provenance (written last)
//	.lock                           held (flock) by the process working on the run
type Dir struct {
	Path string
}

// NewDir creates root/name-YYYYMMDD-HHMMSS (with a numeric suffix if taken).
func NewDir(root, name string) (*Dir, error) {
	base := filepath.Join(root, fmt.Sprintf("%s-%s", name, time.Now().Format("20060102-150405")))
	p := base
	for i := 2; ; i++ {
		err := os.MkdirAll(filepath.Dir(p), 0o755)
		if err == nil {
			err = os.Mkdir(p, 0o755)
		}
		if err == nil {
			break
		}
		if !os.IsExist(err) {
			return nil, fmt.Errorf("run directory %s: %w", p, err)
		}
		p = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Mkdir(filepath.Join(p, rundir.CheckpointsDir), 0o755); err != nil {
		return nil, err
	}
	return &Dir{Path: p}, nil
}

// OpenDir opens an existing run directory (for --resume).
func OpenDir(path string) (*Dir, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("run directory %s is not a directory", path)
	}
	if _, err := os.Stat(filepath.Join(path, rundir.ConfigFile)); err != nil {
		return nil, fmt.Errorf("run directory %s has no config.json: not a koopq run", path)
	}
	return &Dir{Path: path}, nil
}

// Lock takes an exclusive lock on the run directory (flock on its .lock
// file, released by the returned function or when the process dies), so
// that two processes never work on one run. A second Lock fails at once
// with an error naming the holder's pid.
func (d *Dir) Lock() (unlock func(), err error) {
	unlock, holder, err := lockfile.TryLock(d.File(".lock"))
	switch {
	case errors.Is(err, lockfile.ErrBusy):
		if holder == "" {
			holder = "unknown"
		}
		return nil, fmt.Errorf("run directory %s is in use by another koopq process (pid %s); wait for it to end or stop it first", d.Path, holder)
	case err != nil:
		return nil, fmt.Errorf("locking run directory %s: %w", d.Path, err)
	}
	return unlock, nil
}

// removeSkeleton removes the run directory if it holds nothing but what
// NewDir and Lock make (an empty checkpoints/, .lock) and temporary files,
// and reports whether it did: a directory whose config.json could not be
// written leaves nothing behind.
func (d *Dir) removeSkeleton() bool {
	if !IsSkeleton(d.Path) {
		return false
	}
	return os.RemoveAll(d.Path) == nil
}

// removeUnstarted removes a new run directory whose run failed before its
// first step, and reports whether it did: it must hold no more than a
// skeleton (IsSkeleton), config.json, inputs.json and a finished Koopman
// model of its own (not a Koopman checkpoint, which a later attempt could
// resume). Refusals that only the run's set-up finds (a Koopman validation
// split that rounds to nothing, rewards that cannot be normalized, a shift
// below the model's error) then leave nothing behind.
func (d *Dir) removeUnstarted() bool {
	if !isSkeletonWith(d.Path, rundir.ConfigFile, InputsFile, rundir.KoopmanFile) {
		return false
	}
	return os.RemoveAll(d.Path) == nil
}

// IsSkeleton reports whether the directory path holds no more than a run
// directory that never got its config.json: an empty checkpoints/, .lock
// and .tmp-* files. Such a directory can be neither resumed nor reported;
// removing it loses nothing.
func IsSkeleton(path string) bool { return isSkeletonWith(path) }

// isSkeletonWith is IsSkeleton that also allows regular files whose names
// begin with one of also.
func isSkeletonWith(path string, also ...string) bool {
	entries, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	allowed := func(n string) bool {
		for _, p := range also {
			if strings.HasPrefix(n, p) {
				return true
			}
		}
		return false
	}
	for _, e := range entries {
		switch n := e.Name(); {
		case n == ".lock" && e.Type().IsRegular(), strings.HasPrefix(n, ".tmp-") && e.Type().IsRegular(),
			allowed(n) && e.Type().IsRegular():
		case n == rundir.CheckpointsDir && e.IsDir():
			sub, err := os.ReadDir(filepath.Join(path, n))
			if err != nil {
				return false
			}
			for _, f := range sub {
				if !strings.HasPrefix(f.Name(), ".tmp-") || !f.Type().IsRegular() {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// CleanTemp removes the temporary files (.tmp-*) that a killed process left
// in the run directory and its checkpoints/ folder. Call it while holding
// the lock.
func (d *Dir) CleanTemp() error {
	for _, sub := range []string{"", rundir.CheckpointsDir} {
		matches, err := filepath.Glob(filepath.Join(d.Path, sub, ".tmp-*"))
		if err != nil {
			return err
		}
		for _, m := range matches {
			if err := os.Remove(m); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("removing stale temporary file: %w", err)
			}
		}
	}
	return nil
}

// File returns the path of name inside the run directory.
func (d *Dir) File(name string) string { return filepath.Join(d.Path, name) }

// WriteJSON writes v as indented JSON to name, atomically.
func (d *Dir) WriteJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(d.File(name), append(b, '\n'))
}

// ReadJSON decodes name into v.
func (d *Dir) ReadJSON(name string, v any) error { return d.ReadJSONCopies(name, v) }

// ReadJSONCopies reads name once and decodes it into each of vs, which
// thus get independent copies of the same contents (the CLI's --resume
// keeps the recorded config apart from the one its flags change). The
// errors are ReadJSON's.
func (d *Dir) ReadJSONCopies(name string, vs ...any) error {
	b, err := regfile.ReadFile(d.File(name))
	if err != nil {
		return err
	}
	for _, v := range vs {
		if err := json.Unmarshal(b, v); err != nil {
			return fmt.Errorf("%s: %w", d.File(name), err)
		}
	}
	return nil
}

// WriteFileAtomic writes data to a temporary file beside path, syncs it and
// renames it into place (internal/atomicfile); the test crash point
// "atomic" sits just before the rename.
func WriteFileAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, func() { crashPoint("atomic") })
}

// Metrics appends rows to metrics.jsonl and metrics.csv. The CSV's columns
// are every key its rows have ("step" first, the rest sorted); a row that
// brings a key the header lacks (a run resumed by a koopq that logs a new
// statistic) makes the CSV be rebuilt from metrics.jsonl with the new
// column, empty in the earlier rows. metrics.jsonl is the record: on resume
// both are rebuilt from its rows and those only metrics.csv has (see
// OpenMetrics). The CSV writes every number in the shortest form that
// reads back exactly (metrics.csv files written before kept 8 significant
// digits).
type Metrics struct {
	jsonl, csv         *os.File
	jsonlPath, csvPath string
	cols               []string
}

// restartNotice says what a resume without a checkpoint replaces: the last
// step of the run's metric rows (metrics.jsonl or metrics.csv) and of its
// evaluations (history.json), which training from step 0 logs anew. It is
// empty when the run logged nothing yet.
func (d *Dir) restartNotice() (string, error) {
	var lastRow, lastEval int
	rows, _, err := readRows(d.File(rundir.MetricsJSONL), math.MaxInt)
	if err != nil {
		return "", err
	}
	csvRows, err := readCSVRows(d.File(rundir.MetricsCSV), math.MaxInt)
	if err != nil {
		return "", err
	}
	for _, r := range append(rows, csvRows...) {
		lastRow = max(lastRow, int(r[rundir.Step]))
	}
	var hist []EvalPoint
	if err := d.ReadJSON(rundir.HistoryFile, &hist); err != nil && !os.IsNotExist(err) {
		return "", err
	}
	for _, h := range hist {
		lastEval = max(lastEval, h.Step)
	}
	if lastRow == 0 && lastEval == 0 {
		return "", nil
	}
	evals := "no evaluations"
	if lastEval > 0 {
		evals = fmt.Sprintf("evaluations to step %d", lastEval)
	}
	return fmt.Sprintf("run %s has no checkpoint (%s): it restarts from step 0, and the metric rows to step %d and %s "+
		"that an earlier process logged are replaced (that process was killed before its first checkpoint, or the run "+
		"directory came without its checkpoints/, as from git or another machine)", d.Path, rundir.CheckpointFile, lastRow, evals), nil
}

// OpenMetrics opens the run's metric logs for appending. When resuming from
// a checkpoint taken at step keepUpTo (>= 0), rows logged after it (by a run
// that was killed before its next checkpoint) and a torn last line are
// removed first, so the logs continue exactly where the restored state
// does. The kept rows are those of metrics.jsonl plus the steps only
// metrics.csv has (a truncated or damaged JSONL: its rows are recovered
// from the CSV, with the CSV's precision), and both files are rewritten
// with them. keepUpTo < 0 starts new logs.
func (d *Dir) OpenMetrics(keepUpTo int) (*Metrics, error) {
	m := &Metrics{jsonlPath: d.File(rundir.MetricsJSONL), csvPath: d.File(rundir.MetricsCSV)}
	var jsonl []byte
	var rows []map[string]float64
	if keepUpTo >= 0 {
		var lines []string
		var err error
		if rows, lines, err = readRows(m.jsonlPath, keepUpTo); err != nil {
			return nil, err
		}
		fromCSV, err := readCSVRows(m.csvPath, keepUpTo)
		if err != nil {
			return nil, err
		}
		if rows, lines, err = mergeRows(rows, lines, fromCSV); err != nil {
			return nil, err
		}
		var jb strings.Builder
		for _, l := range lines {
			jb.WriteString(l + "\n")
		}
		jsonl = []byte(jb.String())
	}
	if err := WriteFileAtomic(m.jsonlPath, jsonl); err != nil {
		return nil, err
	}
	if err := m.writeCSV(rows); err != nil {
		return nil, err
	}
	var err error
	if m.jsonl, err = os.OpenFile(m.jsonlPath, os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		m.csv.Close()
		return nil, err
	}
	return m, nil
}

// writeCSV replaces metrics.csv with rows under the union of their keys and
// opens it for appending.
func (m *Metrics) writeCSV(rows []map[string]float64) error {
	m.cols = csvColumns(rows...)
	var cb strings.Builder
	if len(rows) > 0 {
		cb.WriteString(strings.Join(m.cols, ",") + "\n")
	}
	for _, row := range rows {
		cb.WriteString(csvRow(m.cols, row))
	}
	if err := WriteFileAtomic(m.csvPath, []byte(cb.String())); err != nil {
		return err
	}
	if m.csv != nil {
		m.csv.Close()
	}
	var err error
	m.csv, err = os.OpenFile(m.csvPath, os.O_APPEND|os.O_WRONLY, 0o644)
	return err
}

// csvColumns orders the keys of rows: "step" first, the rest sorted; nil
// for no rows.
func csvColumns(rows ...map[string]float64) []string {
	if len(rows) == 0 {
		return nil
	}
	keys := map[string]bool{}
	for _, row := range rows {
		for k := range row {
			if k != rundir.Step {
				keys[k] = true
			}
		}
	}
	rest := make([]string, 0, len(keys))
	for k := range keys {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	return append([]string{rundir.Step}, rest...)
}

func csvRow(cols []string, row map[string]float64) string {
	vals := make([]string, len(cols))
	for i, c := range cols {
		if v, ok := row[c]; ok {
			// Exact: the CSV is where a truncated metrics.jsonl's rows are
			// recovered from on resume. Steps stay integers ('g' -1 would
			// write 1e+06).
			if c == rundir.Step {
				vals[i] = strconv.FormatFloat(v, 'f', -1, 64)
			} else {
				vals[i] = strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
	}
	return strings.Join(vals, ",") + "\n"
}

// Log writes one row; it must contain "step".
func (m *Metrics) Log(row map[string]float64) error {
	b, err := json.Marshal(row)
	if err != nil {
		return fmt.Errorf("metrics row: %w", err)
	}
	if _, err := m.jsonl.Write(append(b, '\n')); err != nil {
		return err
	}
	crashPoint("metrics")
	var out string
	if m.cols == nil {
		m.cols = csvColumns(row)
		out = strings.Join(m.cols, ",") + "\n"
	} else if m.newKey(row) {
		// Rebuild the CSV from the record, this row included.
		rows, _, err := readRows(m.jsonlPath, math.MaxInt)
		if err != nil {
			return err
		}
		return m.writeCSV(rows)
	}
	_, err = m.csv.WriteString(out + csvRow(m.cols, row))
	return err
}

// newKey reports whether row has a key the CSV has no column for.
func (m *Metrics) newKey(row map[string]float64) bool {
	for k := range row {
		if !slices.Contains(m.cols, k) {
			return true
		}
	}
	return false
}

// Close flushes and closes both files.
func (m *Metrics) Close() error {
	e1 := m.jsonl.Close()
	e2 := m.csv.Close()
	if e1 != nil {
		return e1
	}
	return e2
}

// readRows returns the complete rows of a metrics.jsonl with step <= keep
// and their original lines. A missing file has no rows; reading stops at
// the first line that is not a complete JSON object (a torn write).
func readRows(jp string, keep int) ([]map[string]float64, []string, error) {
	f, err := os.Open(jp)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var rows []map[string]float64
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var row map[string]float64
		if json.Unmarshal(sc.Bytes(), &row) != nil {
			break
		}
		if int(row[rundir.Step]) <= keep {
			rows = append(rows, row)
			lines = append(lines, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", jp, err)
	}
	return rows, lines, nil
}

// readCSVRows returns the complete rows of a metrics.csv with step <= keep;
// an empty field is a key the row did not log. A missing file has no rows;
// reading stops at an unterminated last line (a torn write) and at the
// first line that does not parse (wrong number of fields, a number that
// does not read, no integer step).
func readCSVRows(path string, keep int) ([]map[string]float64, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	lines = lines[:len(lines)-1] // the piece after the last newline: empty, or torn
	if len(lines) == 0 {
		return nil, nil
	}
	head := strings.Split(lines[0], ",")
	if !slices.Contains(head, rundir.Step) {
		return nil, nil
	}
	var rows []map[string]float64
	for _, line := range lines[1:] {
		fields := strings.Split(line, ",")
		if len(fields) != len(head) {
			break
		}
		row := map[string]float64{}
		ok := true
		for j, f := range fields {
			if f == "" {
				continue
			}
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				ok = false
				break
			}
			row[head[j]] = v
		}
		step, has := row[rundir.Step]
		if !ok || !has || step != math.Trunc(step) {
			break
		}
		if int(step) <= keep {
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// mergeRows adds to metrics.jsonl's rows and lines the rows of fromCSV
// whose steps the JSONL lacks (a JSONL row wins where both have a step: it
// is exact), ordered by step.
func mergeRows(rows []map[string]float64, lines []string, fromCSV []map[string]float64) ([]map[string]float64, []string, error) {
	have := map[float64]bool{}
	for _, r := range rows {
		have[r[rundir.Step]] = true
	}
	added := false
	for _, r := range fromCSV {
		if have[r[rundir.Step]] {
			continue
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, nil, fmt.Errorf("metrics row recovered from metrics.csv: %w", err)
		}
		rows, lines = append(rows, r), append(lines, string(b))
		have[r[rundir.Step]], added = true, true
	}
	if !added {
		return rows, lines, nil
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rows[idx[a]][rundir.Step] < rows[idx[b]][rundir.Step] })
	outRows, outLines := make([]map[string]float64, len(rows)), make([]string, len(rows))
	for i, j := range idx {
		outRows[i], outLines[i] = rows[j], lines[j]
	}
	return outRows, outLines, nil
}
