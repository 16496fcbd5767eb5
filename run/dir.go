package run

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Dir is one run's directory:
//
//	config.json          the full configuration (written once)
//	metrics.jsonl/.csv   one row per log step
//	checkpoints/         latest.safetensors (atomic) and numbered snapshots
//	results.json         final numbers with provenance
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
	if err := os.Mkdir(filepath.Join(p, "checkpoints"), 0o755); err != nil {
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
	if _, err := os.Stat(filepath.Join(path, "config.json")); err != nil {
		return nil, fmt.Errorf("run directory %s has no config.json: not a koopq run", path)
	}
	return &Dir{Path: path}, nil
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
func (d *Dir) ReadJSON(name string, v any) error {
	b, err := os.ReadFile(d.File(name))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", d.File(name), err)
	}
	return nil
}

// WriteFileAtomic writes data to a temporary file beside path, syncs it and
// renames it into place.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600; results are meant to be shared.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Metrics appends rows to metrics.jsonl and metrics.csv. The CSV header is
// fixed by the first row's keys (sorted, "step" first); later rows write
// those columns only.
type Metrics struct {
	jsonl, csv *os.File
	cols       []string
}

// OpenMetrics opens the run's metric logs for appending. When resuming from
// a checkpoint taken at step keepUpTo, rows logged after it (by a run that
// was killed before its next checkpoint) are removed first, so the logs
// continue exactly where the restored state does.
func (d *Dir) OpenMetrics(keepUpTo int) (*Metrics, error) {
	m := &Metrics{}
	jp, cp := d.File("metrics.jsonl"), d.File("metrics.csv")
	if keepUpTo >= 0 {
		if err := truncateRows(jp, cp, keepUpTo); err != nil {
			return nil, err
		}
	}
	var err error
	if m.jsonl, err = os.OpenFile(jp, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		return nil, err
	}
	if m.csv, err = os.OpenFile(cp, os.O_CREATE|os.O_APPEND|os.O_RDWR, 0o644); err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(cp); err == nil && len(b) > 0 {
		first, _, _ := strings.Cut(string(b), "\n")
		m.cols = strings.Split(first, ",")
	}
	return m, nil
}

// Log writes one row; it must contain "step".
func (m *Metrics) Log(row map[string]float64) error {
	b, err := json.Marshal(row)
	if err != nil {
		return err
	}
	if _, err := m.jsonl.Write(append(b, '\n')); err != nil {
		return err
	}
	if m.cols == nil {
		m.cols = []string{"step"}
		var rest []string
		for k := range row {
			if k != "step" {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		m.cols = append(m.cols, rest...)
		if _, err := m.csv.WriteString(strings.Join(m.cols, ",") + "\n"); err != nil {
			return err
		}
	}
	vals := make([]string, len(m.cols))
	for i, c := range m.cols {
		if v, ok := row[c]; ok {
			vals[i] = strconv.FormatFloat(v, 'g', 8, 64)
		}
	}
	_, err = m.csv.WriteString(strings.Join(vals, ",") + "\n")
	return err
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

// truncateRows keeps the rows with step <= keep in both logs.
func truncateRows(jp, cp string, keep int) error {
	if _, err := os.Stat(jp); os.IsNotExist(err) {
		return nil
	}
	f, err := os.Open(jp)
	if err != nil {
		return err
	}
	var kept []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var row map[string]float64
		if json.Unmarshal(sc.Bytes(), &row) != nil {
			break // a torn last line from a kill
		}
		if int(row["step"]) <= keep {
			kept = append(kept, sc.Text())
		}
	}
	f.Close()
	content := strings.Join(kept, "\n")
	if len(kept) > 0 {
		content += "\n"
	}
	if err := WriteFileAtomic(jp, []byte(content)); err != nil {
		return err
	}
	b, err := os.ReadFile(cp)
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	out := lines[:1]
	for _, ln := range lines[1:] {
		s, _, _ := strings.Cut(ln, ",")
		if v, err := strconv.ParseFloat(s, 64); err == nil && int(v) <= keep {
			out = append(out, ln)
		}
	}
	return WriteFileAtomic(cp, []byte(strings.Join(out, "\n")+"\n"))
}
