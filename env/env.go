// Package env defines the simulator interface koopq evaluates policies in and
// collects datasets from, plus a registry of environments by name.
//
// Physics and observations are float64 here; networks convert to float32 at the
// boundary. Implementations live in sub-packages (env/classic in pure Go,
// env/mujoco through cgo) and register themselves with Register in an init func.
package env

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
)

// Space describes an observation or action space.
// For a continuous (Box) space Discrete is 0 and Low/High give per-dimension
// bounds (±Inf allowed). For a discrete space Discrete is the number of actions n,
// actions are passed as a length-1 slice holding the index 0..n-1 as float64,
// and Low/High are nil.
type Space struct {
	Low, High []float64
	Discrete  int
}

// Dim returns the vector length of an element of the space (1 for discrete).
func (s Space) Dim() int {
	if s.Discrete > 0 {
		return 1
	}
	return len(s.Low)
}

// Env is one episodic simulator instance. It is not safe for concurrent use;
// make one per goroutine.
type Env interface {
	// Name is the registry name, e.g. "pendulum".
	Name() string
	// ObservationSpace and ActionSpace describe shapes and bounds.
	ObservationSpace() Space
	ActionSpace() Space
	// MaxEpisodeSteps is the time limit after which Step reports truncated.
	MaxEpisodeSteps() int
	// Reset starts a new episode drawing the initial state from rng and
	// returns the first observation (a fresh slice).
	Reset(rng *rand.Rand) []float64
	// Step applies action (clipped to the action space for continuous envs)
	// and returns the next observation (a fresh slice), the reward, whether
	// the episode terminated (a true terminal state) and whether it was
	// truncated by the time limit. err reports invalid actions (wrong length,
	// NaN) or a simulator failure; the episode must then be reset.
	Step(action []float64) (obs []float64, reward float64, terminated, truncated bool, err error)
	// State returns the full simulator state (enough to restore it exactly,
	// including the elapsed step count as the last element).
	State() []float64
	// SetState restores a state returned by State.
	SetState(state []float64) error
}

// Successer is implemented by environments with a task success test at
// every step (MetaWorld-style manipulation: info["success"]). Success
// reports whether the test holds in the state the last Step reached (false
// after Reset). Evaluation counts an episode as a success when the test
// held at any of its steps (MetaWorld's success rate); environments
// without the method have no success rate.
type Successer interface {
	Success() bool
}

// Factory makes a new environment instance.
type Factory func() (Env, error)

var (
	mu       sync.RWMutex
	registry = map[string]Factory{}
)

// Register adds a factory under name. It panics on duplicate names
// (a programming error at init time).
func Register(name string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[name]; dup {
		panic("env: duplicate registration of " + name)
	}
	registry[name] = f
}

// Make builds the environment registered under name.
func Make(name string) (Env, error) {
	mu.RLock()
	f, ok := registry[name]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("env: unknown environment %q (known: %v)", name, Names())
	}
	return f()
}

// Names lists registered environment names in sorted order.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(registry))
	for k := range registry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
