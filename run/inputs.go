package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/internal/stheader"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/rundir"
)

// InputsFile is the run directory's record of what the run reads
// (Inputs), written when the run starts and checked by every resume.
const InputsFile = rundir.InputsFile

// Inputs are the fingerprints of a run's inputs (inputs.json): the dataset
// it trains on and the Koopman model its augmenter uses; see rundir.Inputs.
type Inputs = rundir.Inputs

// DatasetInput fingerprints the dataset as stored and as read; see
// rundir.DatasetInput.
type DatasetInput = rundir.DatasetInput

// currentInputs fingerprints the dataset cfg.Data read as data (the file
// too when it exists: data may be given in memory) and the Koopman model
// the run would use now: cfg.KoopmanModel, else dir's own model file if it
// exists.
func currentInputs(cfg TrainConfig, data *dataset.Dataset, dir *Dir) (Inputs, error) {
	in := Inputs{Dataset: DatasetInput{Path: cfg.Data, ContentSHA256: data.ContentSHA256(), Transitions: data.Len()}}
	if _, err := os.Stat(cfg.Data); err == nil {
		f, err := fingerprint.Of(cfg.Data)
		if err != nil {
			return in, fmt.Errorf("dataset %s: %w", cfg.Data, err)
		}
		in.Dataset.SHA256, in.Dataset.Bytes = f.SHA256, f.Bytes
	}
	m, err := koopmanInput(cfg, dir)
	in.KoopmanModel = m
	return in, err
}

// koopmanInput fingerprints the Koopman model a run uses, nil when its
// augmentation needs none or it has not been trained yet.
func koopmanInput(cfg TrainConfig, dir *Dir) (*fingerprint.File, error) {
	if !augment.NeedsKoopman(cfg.Augment) {
		return nil, nil
	}
	path := cfg.KoopmanModel
	if path == "" {
		if dir == nil {
			return nil, nil
		}
		path = dir.File(KoopmanFile)
		if _, err := os.Stat(path); os.IsNotExist(err) {
			return nil, nil
		}
	}
	f, err := fingerprint.Of(path)
	if err != nil {
		return nil, fmt.Errorf("Koopman model: %w", err)
	}
	return &f, nil
}

// CheckInputs refuses a resume whose inputs differ from the recorded ones:
// the dataset's transitions (content sha256) and the Koopman model file's
// sha256. The error names the input, both fingerprints and what to do.
func CheckInputs(recorded, now Inputs) error {
	r, n := recorded.Dataset, now.Dataset
	if r.ContentSHA256 != "" && r.ContentSHA256 != n.ContentSHA256 {
		return fmt.Errorf("the dataset changed since this run started: it trained on %s (%d transitions, content sha256 %s), "+
			"now %s has %d transitions with content sha256 %s; a resumed run must continue on the data it started with "+
			"(restore that file, or give the path of the file the run read with --data; or start a new run)", r.Path, r.Transitions, fingerprint.Short(r.ContentSHA256),
			n.Path, n.Transitions, fingerprint.Short(n.ContentSHA256))
	}
	if rm, nm := recorded.KoopmanModel, now.KoopmanModel; rm != nil && nm != nil && rm.SHA256 != nm.SHA256 {
		return fmt.Errorf("the Koopman model changed since this run started: it used %s (sha256 %s), now %s has sha256 %s; "+
			"a resumed run must continue with the model it started with (restore that file, or start a new run)",
			rm.Path, rm.Short(), nm.Path, nm.Short())
	}
	return nil
}

// Relocations checks a resume that reads the dataset or the given Koopman
// model at another path than the run recorded (next against recorded,
// config.json): the file there must hold what the run read before, by the
// fingerprints the run recorded (rec, inputs.json, else the checkpoint's
// own record; nil when there is neither). A move it cannot verify is
// refused, and so is a file at the new path that holds something else,
// naming both paths. A Koopman model the augmentation does not use is no
// input and is not checked. It returns one line per moved input, for the
// process's segment (Segment.Moved) and the user.
func Relocations(recorded, next TrainConfig, rec *Inputs, now Inputs) ([]string, error) {
	var moved []string
	if !samePath(next.Data, recorded.Data) {
		if rec == nil || rec.Dataset.ContentSHA256 == "" {
			return nil, fmt.Errorf("--data %s: the run recorded no content sha256 of the dataset it read at %s (neither inputs.json "+
				"nor its checkpoint has one), so a dataset at another path cannot be checked to be the same; "+
				"put the file back at %s, or start a new run", next.Data, recorded.Data, recorded.Data)
		}
		if r, n := rec.Dataset, now.Dataset; r.ContentSHA256 != n.ContentSHA256 {
			return nil, fmt.Errorf("--data %s holds other transitions than the run read at %s (%d transitions, content sha256 %s; "+
				"%s has %d, content sha256 %s): give the path of the file the run read, or start a new run",
				next.Data, recorded.Data, r.Transitions, fingerprint.Short(r.ContentSHA256), next.Data, n.Transitions, fingerprint.Short(n.ContentSHA256))
		}
		moved = append(moved, fmt.Sprintf("dataset moved: %s → %s (the same %d transitions, content sha256 %s)",
			recorded.Data, next.Data, now.Dataset.Transitions, fingerprint.Short(now.Dataset.ContentSHA256)))
	}
	if augment.NeedsKoopman(next.Augment) && recorded.KoopmanModel != "" && !samePath(next.KoopmanModel, recorded.KoopmanModel) {
		if rec == nil || rec.KoopmanModel == nil || now.KoopmanModel == nil {
			return nil, fmt.Errorf("--koopman %s: the run recorded no sha256 of the Koopman model it read at %s, so a model "+
				"at another path cannot be checked to be the same; put the file back at %s, or start a new run",
				next.KoopmanModel, recorded.KoopmanModel, recorded.KoopmanModel)
		}
		if rec.KoopmanModel.SHA256 != now.KoopmanModel.SHA256 {
			return nil, fmt.Errorf("--koopman %s is another model than the run read at %s (sha256 %s, not %s): give the path "+
				"of the file the run read, or start a new run", next.KoopmanModel, recorded.KoopmanModel, now.KoopmanModel.Short(), rec.KoopmanModel.Short())
		}
		moved = append(moved, fmt.Sprintf("Koopman model moved: %s → %s (the same file, sha256 %s)",
			recorded.KoopmanModel, next.KoopmanModel, now.KoopmanModel.Short()))
	}
	return moved, nil
}

// RecordedInputs returns the inputs a resumed run recorded: inputs.json
// (in), else its checkpoint's own record (ckpt; nil when it has none or
// does not exist).
func RecordedInputs(in *Inputs, ckpt string) *Inputs {
	if in != nil {
		return in
	}
	h, err := stheader.Read(ckpt)
	if err != nil {
		return nil
	}
	trained, _ := checkpointInputs(h.Meta) // a bad record is CheckCheckpoint's error
	return trained
}

// samePath reports whether a and b name one file: equal strings, or two
// names (a relative path recorded by an older koopq, a symlink) of one
// existing file.
func samePath(a, b string) bool {
	if a == b {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// Checkpoint metadata keys: the run configuration and the inputs the
// checkpoint's steps were trained with (JSON of TrainConfig and Inputs).
const (
	ckptRunConfig = "run_config"
	ckptInputs    = "inputs"
)

// CheckCheckpoint refuses to resume from the checkpoint ckpt when what it
// was trained with differs from what the run directory says: its run
// configuration from recorded (config.json; only a larger cql.steps is
// allowed, as on --resume), or its inputs from now (the data and Koopman
// model the run would read). Such a checkpoint holds the steps of another
// configuration, another seed or other data (a hand-edited config.json, a
// removed inputs.json, or a checkpoint copied from another run), and
// continuing it would credit them to this run. A checkpoint written before
// koopq recorded these (or none yet) passes.
func CheckCheckpoint(ckpt string, recorded TrainConfig, now Inputs) error {
	h, err := stheader.Read(ckpt)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("checkpoint: %w", err)
	}
	if h.Meta[ckptRunConfig] != "" && h.Meta[nn.ChecksumKey] == "" {
		// Every koopq that records run_config also checksums the file:
		// a checkpoint without the checksum was edited after it was saved.
		return fmt.Errorf("checkpoint %s has no checksum (%s), which the koopq that wrote it records: the file was edited; "+
			"restore it, or start a new run", ckpt, nn.ChecksumKey)
	}
	if s := h.Meta[ckptRunConfig]; s != "" {
		var trained TrainConfig
		if err := json.Unmarshal([]byte(s), &trained); err != nil {
			return fmt.Errorf("checkpoint %s: bad %s: %w", ckpt, ckptRunConfig, err)
		}
		diffs, err := resumeDiffs(trained, recorded)
		if err != nil {
			return err
		}
		if len(diffs) > 0 {
			return fmt.Errorf("checkpoint %s was trained with other settings than %s says (%s): %s was edited, "+
				"or the checkpoint comes from another run; restore them, or start a new run",
				ckpt, rundir.ConfigFile, strings.Join(diffs, ", "), rundir.ConfigFile)
		}
	}
	trained, err := checkpointInputs(h.Meta)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", ckpt, err)
	}
	if trained != nil {
		if err := CheckInputs(*trained, now); err != nil {
			return fmt.Errorf("checkpoint %s: %w", ckpt, err)
		}
	}
	return nil
}

// checkpointInputs is the record of the inputs a checkpoint's steps were
// trained with (its metadata meta); nil when it has none (older koopq).
func checkpointInputs(meta map[string]string) (*Inputs, error) {
	s := meta[ckptInputs]
	if s == "" {
		return nil, nil
	}
	var trained Inputs
	if err := json.Unmarshal([]byte(s), &trained); err != nil {
		return nil, fmt.Errorf("bad %s: %w", ckptInputs, err)
	}
	return &trained, nil
}

// GEMMIdentity is what must not change between the processes of one run
// for its numbers to be those of an uninterrupted run: the GEMM backend,
// its input precision, the instruction set and kernel it dispatches to,
// and the subnormal mode.
func GEMMIdentity(p Provenance) string {
	return strings.Join([]string{p.BLAS, p.BLASPrecision, p.BLASISA, p.BLASKernel, p.BLASSubnormals}, " / ")
}

// CheckBackend refuses to resume the run whose checkpoint is ckpt in a
// process whose GEMM identity (GEMMIdentity of now) differs from the last
// recorded segment's, unless allow is set (--allow-backend-change); the
// segments then show the mixture. A checkpoint without recorded
// provenance (older koopq) passes.
func CheckBackend(ckpt string, now Provenance, allow bool) error {
	h, err := stheader.Read(ckpt)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) { // no checkpoint yet: nothing was trained
			return nil
		}
		return fmt.Errorf("checkpoint: %w", err)
	}
	var segs []Segment
	if s := h.Meta["segments"]; s != "" {
		if err := json.Unmarshal([]byte(s), &segs); err != nil {
			return fmt.Errorf("checkpoint %s: bad segments: %w", ckpt, err)
		}
	}
	for i := len(segs) - 1; i >= 0; i-- {
		p := segs[i].Provenance
		if p == nil {
			continue
		}
		if was, is := GEMMIdentity(*p), GEMMIdentity(now); was != is && !allow {
			return fmt.Errorf("this run was trained with GEMM %s and this process has %s: the continuation would not give "+
				"the numbers of an uninterrupted run (choose the recorded backend with --backend/--precision, or accept "+
				"the change with --allow-backend-change; the run's segments then record it)", was, is)
		}
		return nil
	}
	return nil
}
