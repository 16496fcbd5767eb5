//go:build cgo && !nomujoco

package manip

import (
	"fmt"
	"math"

	mj "github.com/koopq/koopq/internal/mujoco"
)

// armQ is the number of generalized coordinates of the arm (7 hinges) and
// the fingers (2 slides); they come first in every task's qpos, the task's
// object joints after them.
const armQ = 9

// objectModel is what a task adds to the shared arm-and-table scene: the
// lookup of its bodies and joints, the reset placement, the first object
// slot of the observation, and the reward and success test.
type objectModel interface {
	// bind looks up the task's ids in e.model and sets e.obj.
	bind(e *Env) error
	// prePlace runs right after the simulator reset, before the hand
	// settles: it moves a fixture's mocap base to obj.
	prePlace(e *Env, obj [3]float64)
	// place runs after the hand settled: it sets e.objInit, e.goal and the
	// object's joints, then calls mj_forward.
	place(e *Env, obj, goal [3]float64) error
	// slot writes position (3) and quaternion (4) of the first object slot.
	slot(e *Env, dst []float64)
	// reward returns the task's reward and success for a step that
	// produced obs with the clipped action a.
	reward(e *Env, obs []float64, a [ActDim]float64) (float64, bool)
	// success reports the success test for the current state.
	success(e *Env) bool
}

func newObjectModel(k taskKind) objectModel {
	switch k {
	case kindDoorClose:
		return &doorModel{}
	case kindDrawerClose:
		return &drawerModel{}
	case kindDrawerOpen:
		return &drawerModel{open: true}
	}
	return &puckModel{}
}

func obsObj(obs []float64) [3]float64 { return [3]float64{obs[ObsObj], obs[ObsObj+1], obs[ObsObj+2]} }

// puckModel is push-v2's free puck.
type puckModel struct{ qpos, qvel int }

func (p *puckModel) bind(e *Env) error {
	e.obj = e.model.ID(mj.ObjBody, "obj")
	j := e.model.ID(mj.ObjJoint, "objjoint")
	if e.obj < 0 || j < 0 {
		return fmt.Errorf("no puck body or joint")
	}
	p.qpos, p.qvel = e.model.JntQposAdr()[j], e.model.NV()-6
	if p.qpos != e.model.NQ()-7 || p.qpos != armQ {
		return fmt.Errorf("the puck's free joint must be the last joint")
	}
	return nil
}

func (p *puckModel) prePlace(*Env, [3]float64) {}

func (p *puckModel) place(e *Env, obj, goal [3]float64) error {
	z := e.xpos[3*e.obj+2]
	e.objInit = [3]float64{obj[0], obj[1], z}
	e.goal = [3]float64{goal[0], goal[1], z}
	copy(e.qpos[p.qpos:], e.objInit[:])
	for i := p.qvel; i < p.qvel+6; i++ {
		e.qvel[i] = 0
	}
	return e.data.Forward()
}

func (p *puckModel) slot(e *Env, dst []float64) {
	pos := e.bodyPos(e.obj)
	copy(dst, pos[:])
	q := e.xquat[4*e.obj : 4*e.obj+4]
	scalarLast(dst[3:], [4]float64{q[0], q[1], q[2], q[3]})
}

func (p *puckModel) reward(e *Env, obs []float64, a [ActDim]float64) (float64, bool) {
	return PushReward(e.gripperState(), obsObj(obs), e.goal, obs[ObsGripper], a[3])
}

func (p *puckModel) success(e *Env) bool { return dist3(e.bodyPos(e.obj), e.goal) <= PushTargetRadius }

// bindFixture finds a fixture's moving link and its single joint, which
// must follow the arm's and fingers' coordinates, and checks that the
// fixture's base is the second mocap body.
func bindFixture(e *Env, base, link, joint string) (qadr int, err error) {
	e.obj = e.model.ID(mj.ObjBody, link)
	j := e.model.ID(mj.ObjJoint, joint)
	b := e.model.ID(mj.ObjBody, base)
	if e.obj < 0 || j < 0 || b < 0 {
		return 0, fmt.Errorf("no %s, %s or %s in the model", base, link, joint)
	}
	qadr = e.model.JntQposAdr()[j]
	if qadr != armQ || e.model.NQ() != armQ+1 || e.model.NV() != armQ+1 || e.model.BodyMocapID(b) != 1 {
		return 0, fmt.Errorf("unexpected layout of the %s fixture", base)
	}
	return qadr, nil
}

// doorModel is door-close-v2's hinged door.
type doorModel struct{ qadr, handle int }

func (d *doorModel) bind(e *Env) (err error) {
	if d.qadr, err = bindFixture(e, "door", "door_link", "doorjoint"); err != nil {
		return err
	}
	if d.handle = e.model.ID(mj.ObjSite, "handle"); d.handle < 0 {
		return fmt.Errorf("no handle site")
	}
	return nil
}

func (d *doorModel) prePlace(e *Env, obj [3]float64) { copy(e.mocapPos[3:6], obj[:]) }

// place records the base as the initial object position, puts the goal at
// base + GoalOffset and swings the door open to DoorOpenAngle at rest.
func (d *doorModel) place(e *Env, obj, _ [3]float64) error {
	e.objInit = obj
	for i := range 3 {
		e.goal[i] = obj[i] + e.task.GoalOffset[i]
	}
	e.qpos[d.qadr], e.qvel[d.qadr] = DoorOpenAngle, 0
	return e.data.Forward()
}

// handleQuat is the handle geom's fixed rotation in door_link's frame.
var handleQuat = [4]float64{math.Cos(DoorHandleEulerX / 2), math.Sin(DoorHandleEulerX / 2), 0, 0}

func (d *doorModel) slot(e *Env, dst []float64) {
	copy(dst, e.siteXPos[3*d.handle:3*d.handle+3])
	l := e.xquat[4*e.obj : 4*e.obj+4]
	scalarLast(dst[3:], quatMul([4]float64{l[0], l[1], l[2], l[3]}, handleQuat))
}

func (d *doorModel) handlePos(e *Env) [3]float64 {
	s := e.siteXPos[3*d.handle : 3*d.handle+3]
	return [3]float64{s[0], s[1], s[2]}
}

func (d *doorModel) reward(e *Env, obs []float64, _ [ActDim]float64) (float64, bool) {
	return DoorCloseReward(e.TCP(), obsObj(obs), e.goal, e.objInit, e.task.HandInit)
}

func (d *doorModel) success(e *Env) bool { return dist3(d.handlePos(e), e.goal) <= DoorCloseSuccess }

// drawerModel is the drawer on its slide, for drawer-close-v2 (reset pulls
// it out) and drawer-open-v2 (it starts closed).
type drawerModel struct {
	qadr int
	open bool
}

func (d *drawerModel) bind(e *Env) (err error) {
	d.qadr, err = bindFixture(e, "drawer", "drawer_link", "goal_slidey")
	return err
}

func (d *drawerModel) prePlace(e *Env, obj [3]float64) { copy(e.mocapPos[3:6], obj[:]) }

func (d *drawerModel) place(e *Env, obj, _ [3]float64) error {
	for i := range 3 {
		e.goal[i] = obj[i] + e.task.GoalOffset[i]
	}
	if d.open {
		e.objInit = obj
		return nil
	}
	e.qpos[d.qadr] = DrawerCloseStart
	if err := e.data.Forward(); err != nil {
		return err
	}
	e.objInit = d.handlePoint(e)
	return nil
}

// handlePoint is the observed handle point: drawer_link's origin plus
// (0, −0.16, 0.05) for drawer-close-v2 and (0, −0.16, 0) for
// drawer-open-v2.
func (d *drawerModel) handlePoint(e *Env) [3]float64 {
	p := e.bodyPos(e.obj)
	p[1] += DrawerObsOffsetY
	if !d.open {
		p[2] += DrawerCloseObsOffsetZ
	}
	return p
}

// slot writes the handle point and, for drawer-open-v2, drawer_link's
// quaternion as MuJoCo stores it (w, x, y, z); drawer-close-v2 reports a
// zero quaternion.
func (d *drawerModel) slot(e *Env, dst []float64) {
	p := d.handlePoint(e)
	copy(dst, p[:])
	if d.open {
		copy(dst[3:7], e.xquat[4*e.obj:4*e.obj+4])
	}
}

func (d *drawerModel) reward(e *Env, obs []float64, a [ActDim]float64) (float64, bool) {
	if d.open {
		return DrawerOpenReward([3]float64{obs[0], obs[1], obs[2]}, obsObj(obs), e.goal, e.tcpInit)
	}
	return DrawerCloseReward(e.gripperState(), obsObj(obs), e.goal, a[3])
}

func (d *drawerModel) success(e *Env) bool {
	r := DrawerCloseTargetRadius + 0.015
	if d.open {
		r = DrawerOpenSuccess
	}
	return dist3(d.handlePoint(e), e.goal) <= r
}
