//go:build cgo && !nomujoco

package mujoco

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A ball on a vertical slide joint above a floor: free fall until contact.
const ballXML = `<mujoco>
  <option timestep="0.01" integrator="Euler"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 1"/>
    <body name="ball" pos="0 0 1">
      <joint name="z" type="slide" axis="0 0 1"/>
      <geom type="sphere" size="0.1" mass="2"/>
    </body>
  </worldbody>
  <actuator><motor joint="z" gear="3" ctrllimited="true" ctrlrange="-1 1"/></actuator>
</mujoco>`

func load(t *testing.T, xml string) (*Model, *Data) {
	t.Helper()
	m, err := LoadXML(xml)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewData(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(); m.Close() })
	return m, d
}

func TestVersion(t *testing.T) {
	if v := Version(); v != 222 {
		t.Errorf("MuJoCo version %d, want 222 (2.2.2)", v)
	}
}

func TestLoadXMLErrors(t *testing.T) {
	for _, bad := range []string{"", "<mujoco><worldbody><body pos='0.13/2 0 0'/></worldbody></mujoco>", "<mujoco"} {
		if m, err := LoadXML(bad); err == nil {
			m.Close()
			t.Errorf("LoadXML(%q) succeeded, want error", bad)
		} else if !strings.HasPrefix(err.Error(), "mujoco:") {
			t.Errorf("error %q lacks context", err)
		}
	}
}

func TestModelAccessors(t *testing.T) {
	m, d := load(t, ballXML)
	if m.NQ() != 1 || m.NV() != 1 || m.NU() != 1 || m.NBody() != 2 || m.NJnt() != 1 || m.NGeom() != 2 {
		t.Fatalf("dims nq=%d nv=%d nu=%d nbody=%d njnt=%d ngeom=%d", m.NQ(), m.NV(), m.NU(), m.NBody(), m.NJnt(), m.NGeom())
	}
	if m.Timestep() != 0.01 || m.Integrator() != 0 {
		t.Errorf("timestep %v integrator %d", m.Timestep(), m.Integrator())
	}
	if got := m.BodyMass(); got[1] != 2 {
		t.Errorf("body mass %v", got)
	}
	if g := m.ActuatorGear(); g[0] != 3 {
		t.Errorf("gear %v", g)
	}
	if id := m.ID(ObjBody, "ball"); id != 1 {
		t.Errorf("ball id %d", id)
	}
	if id := m.ID(ObjBody, "nope"); id != -1 {
		t.Errorf("missing id %d", id)
	}
	if j := m.ActuatorJoint(); j[0] != 0 {
		t.Errorf("actuator joint %v", j)
	}
	if len(d.XPos()) != 6 || len(d.CfrcExt()) != 12 || len(d.QaccWarmstart()) != 1 || d.Act() != nil {
		t.Errorf("view lengths")
	}
}

func TestStepFreeFall(t *testing.T) {
	_, d := load(t, ballXML)
	if err := d.Step(10); err != nil {
		t.Fatal(err)
	}
	// Semi-implicit Euler: v_n = -g n h exactly up to round-off; x_n = 1 - g h² n(n+1)/2.
	if v := d.QVel()[0]; math.Abs(v+9.81*0.1) > 1e-12 {
		t.Errorf("qvel %v, want %v", v, -0.981)
	}
	if x := d.QPos()[0]; math.Abs(x-(-9.81*1e-4*55)) > 1e-12 {
		t.Errorf("qpos %v, want %v", x, -9.81*1e-4*55)
	}
	if math.Abs(d.Time()-0.1) > 1e-15 {
		t.Errorf("time %v", d.Time())
	}
	if err := d.Step(0); err == nil {
		t.Error("Step(0) succeeded")
	}
}

// MuJoCo silently resets the data when qpos/qvel is NaN or larger than 1e10;
// Step must report that instead of carrying on from qpos0.
func TestBadStateIsAnError(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	cases := []struct {
		name      string
		qpos, vel float64
		warning   int // mjtWarning seen, or -1 for our own post-step check
	}{
		{"nan qvel", 0.5, math.NaN(), 5},
		{"inf qpos", math.Inf(1), 0, 4},
		{"huge qvel", 0.5, 2e10, 5},
		{"exceeds 1e10 during the step", 9.99e9, 2e9, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, d := load(t, ballXML)
			d.QPos()[0], d.QVel()[0] = c.qpos, c.vel
			err := d.Step(1)
			if !errors.Is(err, ErrBadState) {
				t.Fatalf("Step error %v, want ErrBadState", err)
			}
			if c.warning >= 0 {
				if d.WarningCount(c.warning) == 0 {
					t.Errorf("warning %d not counted", c.warning)
				}
				// The silent reset did happen: the ball restarted from qpos0 = 0.
				if q := d.QPos()[0]; math.Abs(q) > 1e-3 {
					t.Errorf("qpos after MuJoCo's reset = %v, want ≈ 0", q)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "MUJOCO_LOG.TXT")); err == nil {
		t.Error("MUJOCO_LOG.TXT was written")
	}
}

// An internal MuJoCo error (mju_error) must come back as a Go error rather
// than printing, waiting on stdin and exiting the process.
func TestMujocoErrorIsAnError(t *testing.T) {
	t.Chdir(t.TempDir())
	var boxes strings.Builder
	for i := range 10 {
		fmt.Fprintf(&boxes, `<body pos="%d 0 1"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>`, i)
	}
	// The stack suffices for the boxes in the air (compile-time checks at
	// qpos0) but not for 40 contacts.
	xml := `<mujoco><size nstack="1000"/><worldbody><geom type="plane" size="50 5 1"/>` + boxes.String() + `</worldbody></mujoco>`
	m, err := LoadXML(xml)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, err := NewData(m)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 10 {
		d.QPos()[7*i+2] = 0.09 // resting on the floor
	}
	err = d.Step(1)
	if err == nil {
		t.Fatal("step with 40 contacts and a 1000-entry stack succeeded")
	}
	if errors.Is(err, ErrBadState) || !strings.Contains(err.Error(), "Stack overflow") {
		t.Errorf("error %q, want a stack overflow error", err)
	}
	// The data is usable again after a reset.
	d.Reset()
	if err := d.Step(2); err != nil {
		t.Errorf("step after reset: %v", err)
	}
	if _, err := os.Stat("MUJOCO_LOG.TXT"); err == nil {
		t.Error("MUJOCO_LOG.TXT was written")
	}
}

func TestCopyFromAndClose(t *testing.T) {
	m, d := load(t, ballXML)
	d.Ctrl()[0] = 0.7
	if err := d.Step(3); err != nil {
		t.Fatal(err)
	}
	d2, err := NewData(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := d2.CopyFrom(d); err != nil {
		t.Fatal(err)
	}
	if err := d.Step(5); err != nil {
		t.Fatal(err)
	}
	if err := d2.Step(5); err != nil {
		t.Fatal(err)
	}
	if d.QPos()[0] != d2.QPos()[0] || d.QVel()[0] != d2.QVel()[0] {
		t.Error("copied data diverged")
	}
	d2.Close()
	d2.Close() // idempotent
}

func BenchmarkCgoStep(b *testing.B) {
	m, err := LoadXML(ballXML)
	if err != nil {
		b.Fatal(err)
	}
	d, _ := NewData(m)
	for b.Loop() {
		if err := d.Step(1); err != nil {
			b.Fatal(err)
		}
		if d.QPos()[0] < -0.85 {
			d.Reset()
		}
	}
}
