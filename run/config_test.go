package run

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Config files are read strictly: encoding/json matches keys without
// regard to case, so {"batch":32,"BATCH":64} kept one of the two silently
// and {"CQL":{"Batch":5}} was taken; text after the JSON document (or a
// second YAML document) was ignored; a named pipe blocked the read.
func TestConfigFileStrict(t *testing.T) {
	base := DefaultTrainConfig()
	dir := t.TempDir()
	load := func(text string) (TrainConfig, error) {
		p := filepath.Join(dir, "c.json")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return LoadConfigFile(p, base, "")
	}
	for _, c := range []struct{ text, want string }{
		{`{"cql":{"batch":32,"BATCH":64}}`, `key cql.BATCH: keys are case-sensitive, did you mean "batch"?`},
		{`{"cql":{"BATCH":64,"batch":32}}`, `key cql.BATCH: keys are case-sensitive`},
		{`{"CQL":{"batch":5}}`, `key CQL: keys are case-sensitive, did you mean "cql"?`},
		{`{"cql":{"net":{"Hidden":[4]}}}`, `key cql.net.Hidden: keys are case-sensitive, did you mean "hidden"?`},
		{"Eval_Episodes: 3\n", `key Eval_Episodes: keys are case-sensitive, did you mean "eval_episodes"?`},
		{`{"cql":{"batch":32}} garbage`, "text after the settings"},
		{`{"cql":{"batch":32}}}`, "text after the settings"},
		{`{"cql":{"batch":32}}]`, "text after the settings"},
		{"{\"cql\":{\"batch\":32}}\n{\"cql\":{\"batch\":64}}", "text after the settings"},
		{"cql: {batch: 32}\n---\ncql: {batch: 64}\n", "more than one document"},
		{`{"cql":{"batch":32,"batch":64}}`, `mapping key "batch" already defined`},
	} {
		cfg, err := load(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "--config-file ") {
			t.Errorf("%s: batch %d, error %v; want one with %q", c.text, cfg.CQL.Batch, err, c.want)
		}
	}
	// Exact keys, comments and a trailing newline are fine.
	cfg, err := load("{\"cql\":{\"batch\":32}}  # a comment\n\n")
	if err != nil || cfg.CQL.Batch != 32 {
		t.Errorf("valid JSON with a comment: %v %d", err, cfg.CQL.Batch)
	}
	cfg, err = load("")
	if err != nil || cfg.CQL.Batch != base.CQL.Batch {
		t.Errorf("empty file: %v", err)
	}

	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := LoadConfigFile(fifo, base, ""); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("FIFO config file: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("LoadConfigFile blocked on a named pipe")
	}
}
