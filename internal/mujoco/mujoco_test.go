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

// Two hinges about y carrying a site at the end of a 0.5 m + 0.4 m chain.
const twoLinkXML = `<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body name="l1" pos="0 0 1">
      <joint name="j1" type="hinge" axis="0 1 0" armature="0.1"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02" mass="1"/>
      <body name="l2" pos="0.5 0 0">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02" mass="0.5"/>
        <site name="tip" pos="0.4 0 0"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="j1"/><motor joint="j2"/></actuator>
</mujoco>`

func TestJacSiteMatchesFiniteDifferences(t *testing.T) {
	m, d := load(t, twoLinkXML)
	q := []float64{0.3, -0.7}
	site := m.ID(ObjSite, "tip")
	pos := func(q []float64) [3]float64 {
		copy(d.QPos(), q)
		if err := d.Forward(); err != nil {
			t.Fatal(err)
		}
		p := d.SiteXPos()
		return [3]float64{p[3*site], p[3*site+1], p[3*site+2]}
	}
	pos(q)
	jacp, jacr := make([]float64, 6), make([]float64, 6)
	if err := d.JacSite(site, jacp, jacr); err != nil {
		t.Fatal(err)
	}
	const h = 1e-6
	for j := range 2 {
		qp := append([]float64(nil), q...)
		qm := append([]float64(nil), q...)
		qp[j] += h
		qm[j] -= h
		a, b := pos(qp), pos(qm)
		for i := range 3 {
			fd := (a[i] - b[i]) / (2 * h)
			if math.Abs(fd-jacp[2*i+j]) > 1e-6 {
				t.Errorf("jacp[%d,%d] = %v, finite difference %v", i, j, jacp[2*i+j], fd)
			}
		}
		// Both hinges turn about world y: the rotational Jacobian is (0, 1, 0) per column.
		if jacr[0*2+j] != 0 || math.Abs(jacr[1*2+j]-1) > 1e-12 || jacr[2*2+j] != 0 {
			t.Errorf("jacr column %d = (%v, %v, %v), want (0, 1, 0)", j, jacr[j], jacr[2+j], jacr[4+j])
		}
	}
	if err := d.JacSite(5, jacp, nil); err == nil {
		t.Error("JacSite with a bad site id succeeded")
	}
	if err := d.JacSite(site, jacp[:5], nil); err == nil {
		t.Error("JacSite with a short jacp succeeded")
	}
}

func TestFullMAndBias(t *testing.T) {
	m, d := load(t, twoLinkXML)
	copy(d.QPos(), []float64{0, 0})
	if err := d.Forward(); err != nil {
		t.Fatal(err)
	}
	M := make([]float64, 4)
	if err := d.FullM(M); err != nil {
		t.Fatal(err)
	}
	if M[1] != M[2] {
		t.Errorf("mass matrix not symmetric: %v", M)
	}
	// Link 2 about its own hinge (a thin rod of 0.5 kg and 0.4 m plus
	// capsule caps): m l²/3 ≈ 0.0267; M[1,1] must be near it.
	if M[3] < 0.02 || M[3] > 0.035 {
		t.Errorf("M[1,1] = %v, want about 0.027", M[3])
	}
	// M[0,0] includes the 0.1 armature of j1.
	if M[0] < M[3]+0.1 {
		t.Errorf("M[0,0] = %v lacks the armature", M[0])
	}
	// Horizontal arm at rest: the bias is the gravity torque about each
	// hinge, m g x_com summed over the links outboard of it (sign: hinge
	// about +y, gravity −z, so a positive torque lifts the arm).
	b := d.QfrcBias()
	g := 9.81
	want1 := g * (1*0.25 + 0.5*0.7)
	want0 := g * 0.5 * 0.2
	if math.Abs(math.Abs(b[0])-want1) > 0.02 || math.Abs(math.Abs(b[1])-want0) > 0.02 {
		t.Errorf("qfrc_bias %v, want magnitudes %v, %v", b, want1, want0)
	}
	if err := d.FullM(M[:3]); err == nil {
		t.Error("FullM with a short dst succeeded")
	}
	_ = m
}

func TestStep1Step2EqualsStep(t *testing.T) {
	m, d := load(t, twoLinkXML)
	d2, err := NewData(m)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	for _, dd := range []*Data{d, d2} {
		copy(dd.QPos(), []float64{0.2, 0.4})
		copy(dd.Ctrl(), []float64{0.5, -0.3})
	}
	for range 50 {
		if err := d.Step(1); err != nil {
			t.Fatal(err)
		}
		if err := d2.Step1(); err != nil {
			t.Fatal(err)
		}
		if err := d2.Step2(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if d.QPos()[i] != d2.QPos()[i] || d.QVel()[i] != d2.QVel()[i] {
			t.Errorf("dof %d: Step gives (%v, %v), Step1+Step2 (%v, %v)", i, d.QPos()[i], d.QVel()[i], d2.QPos()[i], d2.QVel()[i])
		}
	}
}

func TestSiteXMatAndContacts(t *testing.T) {
	m, d := load(t, ballXML+"")
	_ = m
	d.QPos()[0] = -0.9 // the ball's centre 0.1 m above the floor: touching
	if err := d.Forward(); err != nil {
		t.Fatal(err)
	}
	if d.NCon() < 1 {
		t.Fatalf("no contact with the ball resting on the floor")
	}
	g1, g2, ok := d.ContactGeoms(0)
	if !ok || !((g1 == 0 && g2 == 1) || (g1 == 1 && g2 == 0)) {
		t.Errorf("contact geoms %d, %d (ok %v), want floor 0 and ball 1", g1, g2, ok)
	}
	if _, _, ok := d.ContactGeoms(d.NCon()); ok {
		t.Error("ContactGeoms out of range reported ok")
	}
	m2, d2 := load(t, twoLinkXML)
	copy(d2.QPos(), []float64{0.5, 0})
	if err := d2.Forward(); err != nil {
		t.Fatal(err)
	}
	R := d2.SiteXMat()[9*m2.ID(ObjSite, "tip"):][:9]
	// Rotation by 0.5 rad about y: R = [[c,0,s],[0,1,0],[-s,0,c]].
	c, s := math.Cos(0.5), math.Sin(0.5)
	want := []float64{c, 0, s, 0, 1, 0, -s, 0, c}
	for i := range 9 {
		if math.Abs(R[i]-want[i]) > 1e-12 {
			t.Fatalf("site xmat %v, want %v", R, want)
		}
	}
}
