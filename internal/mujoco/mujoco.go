//go:build cgo && !nomujoco

package mujoco

/*
#cgo LDFLAGS: -lmujoco
#include <mujoco/mujoco.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Per-thread recovery point for mju_error. A cgo call runs on one OS thread
// from start to finish, so a thread-local jmp_buf set inside a guarded C call
// is the one the handler sees when MuJoCo raises an error during that call.
static __thread jmp_buf* kq_jmp = NULL;
static __thread char kq_errmsg[1024];
static __thread char kq_warnmsg[1024];

static void kq_error_handler(const char* msg) {
	snprintf(kq_errmsg, sizeof kq_errmsg, "%s", msg);
	if (kq_jmp != NULL) {
		jmp_buf* j = kq_jmp;
		kq_jmp = NULL;
		longjmp(*j, 1);
	}
	// Not inside a guarded call: there is nothing safe to return to.
	fprintf(stderr, "mujoco: fatal error outside a guarded call: %s\n", msg);
	abort();
}

static void kq_warning_handler(const char* msg) {
	snprintf(kq_warnmsg, sizeof kq_warnmsg, "%s", msg);
}

static void kq_install_handlers(void) {
	mju_user_error = kq_error_handler;
	mju_user_warning = kq_warning_handler;
}

static mjModel* kq_load_xml(const char* xml, int len, char* err, int errsz) {
	mjVFS* vfs = (mjVFS*)malloc(sizeof(mjVFS)); // ~2 MB: keep it off the stack
	if (vfs == NULL) {
		snprintf(err, errsz, "out of memory allocating mjVFS");
		return NULL;
	}
	mj_defaultVFS(vfs);
	if (mj_makeEmptyFileVFS(vfs, "model.xml", len) != 0) {
		snprintf(err, errsz, "mj_makeEmptyFileVFS failed");
		free(vfs);
		return NULL;
	}
	int i = mj_findFileVFS(vfs, "model.xml");
	memcpy(vfs->filedata[i], xml, len);
	mjModel* volatile m = NULL;
	jmp_buf jb;
	if (setjmp(jb) == 0) {
		kq_jmp = &jb;
		m = mj_loadXML("model.xml", vfs, err, errsz);
		kq_jmp = NULL;
	} else {
		snprintf(err, errsz, "%s", kq_errmsg);
		m = NULL;
	}
	mj_deleteVFS(vfs);
	free(vfs);
	return m;
}

static mjData* kq_make_data(const mjModel* m, char* err, int errsz) {
	mjData* volatile d = NULL;
	jmp_buf jb;
	if (setjmp(jb) == 0) {
		kq_jmp = &jb;
		d = mj_makeData(m);
		kq_jmp = NULL;
		if (d == NULL) snprintf(err, errsz, "mj_makeData returned NULL");
	} else {
		snprintf(err, errsz, "%s", kq_errmsg);
		d = NULL;
	}
	return d;
}

// Warnings that mean the simulation result is wrong: MuJoCo reset the state
// (bad qpos/qvel/qacc), zeroed the controls, or dropped contacts/constraints.
static int kq_fatal_warning(const mjData* d) {
	static const int fatal[] = {mjWARN_BADQPOS, mjWARN_BADQVEL, mjWARN_BADQACC,
	                            mjWARN_BADCTRL, mjWARN_CONTACTFULL, mjWARN_CNSTRFULL};
	for (int k = 0; k < (int)(sizeof fatal / sizeof fatal[0]); k++) {
		if (d->warning[fatal[k]].number > 0) return fatal[k];
	}
	return -1;
}

static const char* kq_warning_name(int w) {
	switch (w) {
	case mjWARN_BADQPOS: return "bad qpos (NaN, Inf or |x|>1e10); MuJoCo reset the state";
	case mjWARN_BADQVEL: return "bad qvel (NaN, Inf or |x|>1e10); MuJoCo reset the state";
	case mjWARN_BADQACC: return "bad qacc (NaN, Inf or |x|>1e10); MuJoCo reset the state";
	case mjWARN_BADCTRL: return "bad ctrl; MuJoCo zeroed the controls";
	case mjWARN_CONTACTFULL: return "contact list full; contacts were dropped";
	case mjWARN_CNSTRFULL: return "constraint buffer full; constraints were dropped";
	}
	return "warning";
}

// Status codes of the guarded calls.
enum { KQ_OK = 0, KQ_ERROR = 1, KQ_WARNING = 2, KQ_BADSTATE = 3 };

static int kq_check_state(const mjModel* m, const mjData* d, char* err, int errsz) {
	for (int j = 0; j < m->nq; j++) {
		if (mju_isBad(d->qpos[j])) {
			snprintf(err, errsz, "bad qpos[%d] = %g after step (NaN, Inf or |x|>1e10)", j, d->qpos[j]);
			return KQ_BADSTATE;
		}
	}
	for (int j = 0; j < m->nv; j++) {
		if (mju_isBad(d->qvel[j])) {
			snprintf(err, errsz, "bad qvel[%d] = %g after step (NaN, Inf or |x|>1e10)", j, d->qvel[j]);
			return KQ_BADSTATE;
		}
	}
	return KQ_OK;
}

// kq_step calls mj_step n times. Warning counters are cleared before every
// substep so that a reset inside mj_step (which itself clears and re-counts
// them) is always seen. After the last substep the state is checked as the
// next mj_step would check it, so a blow-up is reported at once.
static int kq_step(const mjModel* m, mjData* d, int n, char* err, int errsz) {
	jmp_buf jb;
	volatile int i = 0;
	if (setjmp(jb) != 0) {
		d->pstack = 0; // the frames that held stack space were abandoned
		snprintf(err, errsz, "mj_step (substep %d): %s", (int)i, kq_errmsg);
		return KQ_ERROR;
	}
	kq_jmp = &jb;
	for (i = 0; i < n; i++) {
		for (int w = 0; w < mjNWARNING; w++) d->warning[w].number = 0;
		mj_step(m, d);
		int w = kq_fatal_warning(d);
		if (w >= 0) {
			kq_jmp = NULL;
			snprintf(err, errsz, "mj_step (substep %d): %s (index %d)", (int)i,
			         kq_warning_name(w), d->warning[w].lastinfo);
			return KQ_WARNING;
		}
	}
	kq_jmp = NULL;
	return kq_check_state(m, d, err, errsz);
}

// kq_call runs one of the forward-type functions under the error guard.
enum { KQ_FORWARD = 0, KQ_RNEPOST = 1, KQ_RESET = 2, KQ_STEP1 = 3, KQ_STEP2 = 4 };

static int kq_call(int what, const mjModel* m, mjData* d, char* err, int errsz) {
	jmp_buf jb;
	if (setjmp(jb) != 0) {
		d->pstack = 0;
		snprintf(err, errsz, "%s", kq_errmsg);
		return KQ_ERROR;
	}
	kq_jmp = &jb;
	for (int w = 0; w < mjNWARNING; w++) d->warning[w].number = 0;
	switch (what) {
	case KQ_FORWARD: mj_forward(m, d); break;
	case KQ_RNEPOST: mj_rnePostConstraint(m, d); break;
	case KQ_RESET: mj_resetData(m, d); break;
	case KQ_STEP1: mj_step1(m, d); break;
	case KQ_STEP2: mj_step2(m, d); break;
	}
	kq_jmp = NULL;
	int w = kq_fatal_warning(d);
	if (w >= 0) {
		snprintf(err, errsz, "%s (index %d)", kq_warning_name(w), d->warning[w].lastinfo);
		return KQ_WARNING;
	}
	return KQ_OK;
}

// kq_jac_site fills the 3×nv translational and rotational Jacobians of a
// site under the error guard.
static int kq_jac_site(const mjModel* m, mjData* d, mjtNum* jacp, mjtNum* jacr, int site, char* err, int errsz) {
	jmp_buf jb;
	if (setjmp(jb) != 0) {
		d->pstack = 0;
		snprintf(err, errsz, "%s", kq_errmsg);
		return KQ_ERROR;
	}
	kq_jmp = &jb;
	mj_jacSite(m, d, jacp, jacr, site);
	kq_jmp = NULL;
	return KQ_OK;
}

static int kq_contact_geoms(const mjData* d, int i, int* g1, int* g2) {
	if (i < 0 || i >= d->ncon) return 0;
	*g1 = d->contact[i].geom1;
	*g2 = d->contact[i].geom2;
	return 1;
}

static int kq_warning_count(const mjData* d, int w) { return d->warning[w].number; }
static void kq_clear_warnings(mjData* d) {
	for (int w = 0; w < mjNWARNING; w++) d->warning[w].number = 0;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

func init() { C.kq_install_handlers() }

// Version is the MuJoCo library version as an integer (222 for 2.2.2).
func Version() int { return int(C.mj_version()) }

// ObjType names a MuJoCo object type for name lookups (mjtObj).
type ObjType int

// Object types accepted by Model.ID.
const (
	ObjBody     ObjType = C.mjOBJ_BODY
	ObjJoint    ObjType = C.mjOBJ_JOINT
	ObjGeom     ObjType = C.mjOBJ_GEOM
	ObjActuator ObjType = C.mjOBJ_ACTUATOR
	ObjSite     ObjType = C.mjOBJ_SITE
)

const errBufSize = 1024

// Model is a compiled MuJoCo model (mjModel).
type Model struct {
	ptr     *C.mjModel
	cleanup runtime.Cleanup
}

// LoadXML compiles an MJCF document held in memory. Compiler errors (for
// example "XML Error: problem reading attribute 'pos'") are returned as errors.
func LoadXML(xml string) (*Model, error) {
	if len(xml) == 0 {
		return nil, errors.New("mujoco: empty MJCF document")
	}
	cxml := C.CString(xml)
	defer C.free(unsafe.Pointer(cxml))
	var errbuf [errBufSize]C.char
	p := C.kq_load_xml(cxml, C.int(len(xml)), &errbuf[0], errBufSize)
	if p == nil {
		return nil, fmt.Errorf("mujoco: load MJCF: %s", C.GoString(&errbuf[0]))
	}
	m := &Model{ptr: p}
	m.cleanup = runtime.AddCleanup(m, func(p *C.mjModel) { C.mj_deleteModel(p) }, p)
	return m, nil
}

// Close frees the model. Every Data made from it must be closed or unused
// afterwards. Close is idempotent.
func (m *Model) Close() {
	if m.ptr == nil {
		return
	}
	m.cleanup.Stop()
	C.mj_deleteModel(m.ptr)
	m.ptr = nil
}

// NQ is the number of generalized coordinates (len of qpos).
func (m *Model) NQ() int { return int(m.ptr.nq) }

// NV is the number of degrees of freedom (len of qvel).
func (m *Model) NV() int { return int(m.ptr.nv) }

// NU is the number of actuators (len of ctrl).
func (m *Model) NU() int { return int(m.ptr.nu) }

// NA is the number of activation states (len of act).
func (m *Model) NA() int { return int(m.ptr.na) }

// NBody is the number of bodies including the world body.
func (m *Model) NBody() int { return int(m.ptr.nbody) }

// NMocap is the number of mocap bodies (rows of mocap_pos and mocap_quat).
func (m *Model) NMocap() int { return int(m.ptr.nmocap) }

// NSite is the number of sites.
func (m *Model) NSite() int { return int(m.ptr.nsite) }

// BodyMocapID returns the mocap index of body b (body_mocapid), or -1 when
// b is not a mocap body or out of range.
func (m *Model) BodyMocapID(b int) int {
	if b < 0 || b >= m.NBody() {
		return -1
	}
	ids := unsafe.Slice((*C.int)(unsafe.Pointer(m.ptr.body_mocapid)), m.NBody())
	return int(ids[b])
}

// NJnt is the number of joints.
func (m *Model) NJnt() int { return int(m.ptr.njnt) }

// NGeom is the number of geoms.
func (m *Model) NGeom() int { return int(m.ptr.ngeom) }

// Timestep is the simulation timestep opt.timestep in seconds.
func (m *Model) Timestep() float64 { return float64(m.ptr.opt.timestep) }

// Integrator is opt.integrator (0 Euler, 1 RK4, 2 implicit).
func (m *Model) Integrator() int { return int(m.ptr.opt.integrator) }

func cview(p *C.mjtNum, n int) []float64 {
	if n == 0 || p == nil {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(p)), n)
}

func ccopy(p *C.mjtNum, n int) []float64 {
	return append([]float64(nil), cview(p, n)...)
}

// BodyMass returns a copy of body_mass, [nbody].
func (m *Model) BodyMass() []float64 { return ccopy(m.ptr.body_mass, m.NBody()) }

// BodyInertia returns a copy of body_inertia (principal moments), [nbody*3].
func (m *Model) BodyInertia() []float64 { return ccopy(m.ptr.body_inertia, 3*m.NBody()) }

// Qpos0 returns a copy of the reference configuration qpos0, [nq].
func (m *Model) Qpos0() []float64 { return ccopy(m.ptr.qpos0, m.NQ()) }

// JntRange returns a copy of jnt_range, [njnt*2] (lo, hi per joint, radians or metres).
func (m *Model) JntRange() []float64 { return ccopy(m.ptr.jnt_range, 2*m.NJnt()) }

// JntLimited reports for each joint whether it is limited, [njnt].
func (m *Model) JntLimited() []bool {
	b := unsafe.Slice((*C.mjtByte)(unsafe.Pointer(m.ptr.jnt_limited)), m.NJnt())
	out := make([]bool, len(b))
	for i, v := range b {
		out[i] = v != 0
	}
	return out
}

// JntStiffness returns a copy of jnt_stiffness, [njnt].
func (m *Model) JntStiffness() []float64 { return ccopy(m.ptr.jnt_stiffness, m.NJnt()) }

// JntQposAdr returns, for each joint, its first index in qpos, [njnt].
func (m *Model) JntQposAdr() []int {
	a := unsafe.Slice((*C.int)(unsafe.Pointer(m.ptr.jnt_qposadr)), m.NJnt())
	out := make([]int, len(a))
	for i, v := range a {
		out[i] = int(v)
	}
	return out
}

// DofDamping returns a copy of dof_damping, [nv].
func (m *Model) DofDamping() []float64 { return ccopy(m.ptr.dof_damping, m.NV()) }

// DofArmature returns a copy of dof_armature, [nv].
func (m *Model) DofArmature() []float64 { return ccopy(m.ptr.dof_armature, m.NV()) }

// GeomFriction returns a copy of geom_friction, [ngeom*3].
func (m *Model) GeomFriction() []float64 { return ccopy(m.ptr.geom_friction, 3*m.NGeom()) }

// GeomPos returns a copy of geom_pos (position in the parent body's frame;
// the world frame for world-body geoms), [ngeom*3].
func (m *Model) GeomPos() []float64 { return ccopy(m.ptr.geom_pos, 3*m.NGeom()) }

// GeomSize returns geom_size [ngeom, 3]: sphere (radius), capsule (radius,
// half-length), plane (half-sizes x, y and grid spacing), box (half-sizes).
func (m *Model) GeomSize() []float64 { return ccopy(m.ptr.geom_size, 3*m.NGeom()) }

// GeomSolImp returns a copy of geom_solimp (MuJoCo 2.2: 5 numbers per geom), [ngeom*5].
func (m *Model) GeomSolImp() []float64 { return ccopy(m.ptr.geom_solimp, 5*m.NGeom()) }

// ActuatorGear returns the first gear component of each actuator, [nu].
func (m *Model) ActuatorGear() []float64 {
	g := cview(m.ptr.actuator_gear, 6*m.NU())
	out := make([]float64, m.NU())
	for i := range out {
		out[i] = g[6*i]
	}
	return out
}

// ActuatorCtrlRange returns a copy of actuator_ctrlrange, [nu*2].
func (m *Model) ActuatorCtrlRange() []float64 { return ccopy(m.ptr.actuator_ctrlrange, 2*m.NU()) }

// ActuatorJoint returns the joint id each actuator drives (actuator_trnid[:,0]), [nu].
func (m *Model) ActuatorJoint() []int {
	t := unsafe.Slice((*C.int)(unsafe.Pointer(m.ptr.actuator_trnid)), 2*m.NU())
	out := make([]int, m.NU())
	for i := range out {
		out[i] = int(t[2*i])
	}
	return out
}

// ID returns the id of the named object of the given type, or -1.
func (m *Model) ID(t ObjType, name string) int {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return int(C.mj_name2id(m.ptr, C.int(t), cs))
}

// Data is the simulation state and workspace (mjData) for one Model.
type Data struct {
	m       *Model // keeps the model alive while the data is in use
	ptr     *C.mjData
	cleanup runtime.Cleanup
	errbuf  [errBufSize]C.char
}

// NewData allocates simulation data for m, initialised to qpos0 (mj_makeData).
func NewData(m *Model) (*Data, error) {
	if m == nil || m.ptr == nil {
		return nil, errors.New("mujoco: NewData on a nil or closed model")
	}
	var errbuf [errBufSize]C.char
	p := C.kq_make_data(m.ptr, &errbuf[0], errBufSize)
	if p == nil {
		return nil, fmt.Errorf("mujoco: make data: %s", C.GoString(&errbuf[0]))
	}
	d := &Data{m: m, ptr: p}
	d.cleanup = runtime.AddCleanup(d, func(p *C.mjData) { C.mj_deleteData(p) }, p)
	return d, nil
}

// Close frees the data; views obtained from it become invalid. Idempotent.
func (d *Data) Close() {
	if d.ptr == nil {
		return
	}
	d.cleanup.Stop()
	C.mj_deleteData(d.ptr)
	d.ptr = nil
}

// Model returns the model d was made for.
func (d *Data) Model() *Model { return d.m }

func (d *Data) status(code C.int, what string) error {
	switch code {
	case C.KQ_OK:
		return nil
	case C.KQ_WARNING, C.KQ_BADSTATE:
		return fmt.Errorf("mujoco: %s: %s: %w", what, C.GoString(&d.errbuf[0]), ErrBadState)
	default:
		return fmt.Errorf("mujoco: %s: %s", what, C.GoString(&d.errbuf[0]))
	}
}

// Step advances the simulation by n calls of mj_step with the current ctrl.
// It returns an error wrapping ErrBadState when MuJoCo flagged a bad state
// (and silently reset the data), dropped contacts or controls, or when the
// state after the last substep is NaN, infinite or larger than 1e10; the data
// must then be reset or overwritten before it is used again. An internal
// MuJoCo error (mju_error, e.g. "Stack overflow") is returned as a plain
// error; the step was abandoned midway and the data must be Reset.
func (d *Data) Step(n int) error {
	if n < 1 {
		return fmt.Errorf("mujoco: step count %d < 1", n)
	}
	code := C.kq_step(d.m.ptr, d.ptr, C.int(n), &d.errbuf[0], errBufSize)
	runtime.KeepAlive(d)
	return d.status(code, "step")
}

// Forward runs mj_forward: recomputes all derived quantities (positions,
// contacts, accelerations) from qpos, qvel, act and ctrl. Note that it also
// overwrites qacc_warmstart with the accelerations it solves for.
func (d *Data) Forward() error {
	return d.call(C.KQ_FORWARD, "forward")
}

// RnePostConstraint runs mj_rnePostConstraint, which fills cfrc_ext (and
// cacc, cfrc_int). mj_step does not call it.
func (d *Data) RnePostConstraint() error {
	return d.call(C.KQ_RNEPOST, "rnePostConstraint")
}

// Reset runs mj_resetData: qpos = qpos0, everything else zero.
func (d *Data) Reset() {
	C.kq_call(C.KQ_RESET, d.m.ptr, d.ptr, &d.errbuf[0], errBufSize)
	runtime.KeepAlive(d)
}

// CopyFrom copies the complete state and workspace of src into d (mj_copyData).
// Both must belong to the same model.
func (d *Data) CopyFrom(src *Data) error {
	if src.m != d.m {
		return errors.New("mujoco: CopyFrom between data of different models")
	}
	C.mj_copyData(d.ptr, d.m.ptr, src.ptr)
	runtime.KeepAlive(d)
	runtime.KeepAlive(src)
	return nil
}

// WarningCount returns how often warning w (mjtWarning) was raised since the
// counters were last cleared; Step and Forward clear them before running.
func (d *Data) WarningCount(w int) int {
	if w < 0 || w >= C.mjNWARNING {
		return 0
	}
	return int(C.kq_warning_count(d.ptr, C.int(w)))
}

// Time returns the simulation time d.time.
func (d *Data) Time() float64 { return float64(d.ptr.time) }

// SetTime sets the simulation time.
func (d *Data) SetTime(t float64) { d.ptr.time = C.mjtNum(t) }

// NCon returns the number of contacts found by the last forward pass.
func (d *Data) NCon() int { return int(d.ptr.ncon) }

// QPos is a view of qpos, [nq].
func (d *Data) QPos() []float64 { return cview(d.ptr.qpos, d.m.NQ()) }

// QVel is a view of qvel, [nv].
func (d *Data) QVel() []float64 { return cview(d.ptr.qvel, d.m.NV()) }

// Act is a view of act, [na] (nil when na = 0).
func (d *Data) Act() []float64 { return cview(d.ptr.act, d.m.NA()) }

// Ctrl is a view of ctrl, [nu].
func (d *Data) Ctrl() []float64 { return cview(d.ptr.ctrl, d.m.NU()) }

// QAcc is a view of qacc, [nv].
func (d *Data) QAcc() []float64 { return cview(d.ptr.qacc, d.m.NV()) }

// QaccWarmstart is a view of qacc_warmstart, [nv]: the constraint solver's
// starting point for the next step. Restore it for bitwise replay.
func (d *Data) QaccWarmstart() []float64 { return cview(d.ptr.qacc_warmstart, d.m.NV()) }

// CfrcExt is a view of cfrc_ext, [nbody*6] (per body: torque(3), force(3)).
// It is only filled by RnePostConstraint.
func (d *Data) CfrcExt() []float64 { return cview(d.ptr.cfrc_ext, 6*d.m.NBody()) }

// XPos is a view of xpos, [nbody*3]: Cartesian body-frame positions from the
// last kinematics pass (after an RK4 step, those of its last stage).
func (d *Data) XPos() []float64 { return cview(d.ptr.xpos, 3*d.m.NBody()) }

// XAnchor returns the joints' global anchor positions [njnt, 3] as last
// computed by Forward or Step (a view into C memory).
func (d *Data) XAnchor() []float64 { return cview(d.ptr.xanchor, 3*d.m.NJnt()) }

// XAxis returns the joints' global axes [njnt, 3] (a view into C memory).
func (d *Data) XAxis() []float64 { return cview(d.ptr.xaxis, 3*d.m.NJnt()) }

// GeomXPos returns the geoms' global positions [ngeom, 3] (a view).
func (d *Data) GeomXPos() []float64 { return cview(d.ptr.geom_xpos, 3*d.m.NGeom()) }

// GeomXMat returns the geoms' global orientations [ngeom, 9], row-major
// rotation matrices whose third column is the geom's z axis (a view).
func (d *Data) GeomXMat() []float64 { return cview(d.ptr.geom_xmat, 9*d.m.NGeom()) }

// XQuat returns the bodies' global orientations [nbody, 4] as unit
// quaternions (w, x, y, z) from the last kinematics pass (a view).
func (d *Data) XQuat() []float64 { return cview(d.ptr.xquat, 4*d.m.NBody()) }

// MocapPos is a view of mocap_pos [nmocap, 3]: the world positions of the
// mocap bodies, inputs that the next Forward or Step reads.
func (d *Data) MocapPos() []float64 { return cview(d.ptr.mocap_pos, 3*d.m.NMocap()) }

// MocapQuat is a view of mocap_quat [nmocap, 4] (w, x, y, z): the mocap
// bodies' orientations (MuJoCo normalises a copy when it uses them).
func (d *Data) MocapQuat() []float64 { return cview(d.ptr.mocap_quat, 4*d.m.NMocap()) }

// SiteXPos returns the sites' global positions [nsite, 3] (a view).
func (d *Data) SiteXPos() []float64 { return cview(d.ptr.site_xpos, 3*d.m.NSite()) }

// call runs one of kq_call's functions (fn: KQ_FORWARD, …) under the
// error guard and turns its status into an error naming what.
func (d *Data) call(fn C.int, what string) error {
	code := C.kq_call(fn, d.m.ptr, d.ptr, &d.errbuf[0], errBufSize)
	runtime.KeepAlive(d)
	return d.status(code, what)
}

// Step1 runs mj_step1: the position- and velocity-dependent half of a step
// (kinematics, inertia qM, bias forces qfrc_bias, contacts detected, but no
// accelerations). A controller may then read the state and set ctrl before
// Step2 finishes the step; Step1 followed by Step2 equals one Step(1) with
// the Euler integrator. The error cases are those of Forward.
func (d *Data) Step1() error {
	return d.call(C.KQ_STEP1, "step1")
}

// Step2 runs mj_step2 (accelerations from the current ctrl, then
// integration) after Step1, and checks the new state as Step does: an
// error wrapping ErrBadState when it is NaN, infinite or larger than 1e10.
func (d *Data) Step2() error {
	code := C.kq_call(C.KQ_STEP2, d.m.ptr, d.ptr, &d.errbuf[0], errBufSize)
	if code == C.KQ_OK {
		code = C.kq_check_state(d.m.ptr, d.ptr, &d.errbuf[0], errBufSize)
	}
	runtime.KeepAlive(d)
	return d.status(code, "step2")
}

// JacSite writes the Jacobians of site s's world position (jacp) and
// orientation (jacr, angular velocity in world axes) with respect to qvel,
// each [3, nv] row-major, as mj_jacSite computes them from the last
// kinematics pass (Forward, Step or Step1). Either may be nil to skip it.
func (d *Data) JacSite(s int, jacp, jacr []float64) error {
	nv := d.m.NV()
	if s < 0 || s >= d.m.NSite() {
		return fmt.Errorf("mujoco: JacSite: site %d out of range [0, %d)", s, d.m.NSite())
	}
	var pp, pr *C.mjtNum
	if jacp != nil {
		if len(jacp) != 3*nv {
			return fmt.Errorf("mujoco: JacSite: jacp has %d entries, want 3*nv = %d", len(jacp), 3*nv)
		}
		pp = (*C.mjtNum)(unsafe.Pointer(&jacp[0]))
	}
	if jacr != nil {
		if len(jacr) != 3*nv {
			return fmt.Errorf("mujoco: JacSite: jacr has %d entries, want 3*nv = %d", len(jacr), 3*nv)
		}
		pr = (*C.mjtNum)(unsafe.Pointer(&jacr[0]))
	}
	code := C.kq_jac_site(d.m.ptr, d.ptr, pp, pr, C.int(s), &d.errbuf[0], errBufSize)
	runtime.KeepAlive(jacp)
	runtime.KeepAlive(jacr)
	runtime.KeepAlive(d)
	return d.status(code, "jacSite")
}

// FullM writes the joint-space inertia matrix (mass matrix including
// armature), [nv, nv] row-major, expanded from the sparse qM of the last
// Forward, Step or Step1 (mj_fullM).
func (d *Data) FullM(dst []float64) error {
	nv := d.m.NV()
	if len(dst) != nv*nv {
		return fmt.Errorf("mujoco: FullM: dst has %d entries, want nv*nv = %d", len(dst), nv*nv)
	}
	if nv == 0 {
		return nil
	}
	C.mj_fullM(d.m.ptr, (*C.mjtNum)(unsafe.Pointer(&dst[0])), d.ptr.qM)
	runtime.KeepAlive(d)
	return nil
}

// QfrcBias is a view of qfrc_bias, [nv]: Coriolis, centrifugal and
// gravitational generalized forces (C(q, v) v + g(q)) of the last Forward,
// Step or Step1; a torque equal to it compensates gravity.
func (d *Data) QfrcBias() []float64 { return cview(d.ptr.qfrc_bias, d.m.NV()) }

// SiteXMat returns the sites' global orientations [nsite, 9], row-major
// rotation matrices whose columns are the site's axes in world coordinates
// (a view).
func (d *Data) SiteXMat() []float64 { return cview(d.ptr.site_xmat, 9*d.m.NSite()) }

// ContactGeoms returns the two geom ids of contact i of the last forward
// pass (0 <= i < NCon), and ok = false for an index out of range.
func (d *Data) ContactGeoms(i int) (g1, g2 int, ok bool) {
	var a, b C.int
	if C.kq_contact_geoms(d.ptr, C.int(i), &a, &b) == 0 {
		return -1, -1, false
	}
	return int(a), int(b), true
}

// ClearWarnings zeroes the warning counters.
func (d *Data) ClearWarnings() { C.kq_clear_warnings(d.ptr) }
