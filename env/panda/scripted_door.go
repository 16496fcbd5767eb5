package panda

import "math"

// ScriptedDoor's geometry and gains (metres, radians).
const (
	// doorGripR is where along the handle bar (from the latch axis) the
	// fingers close: far enough from the axis to clear handle_base (radius
	// 0.05) and to need little force, near enough to stay in reach.
	doorGripR    = 0.12
	doorBack     = 0.10  // pre-grasp: this far in front of the bar along the door's normal
	doorLine     = 0.012 // slide in only while the grip site is this close to the line through the grasp point along n
	doorOriTol   = 0.15  // orientation error (rad) below which the gripper slides in
	doorHoldDist = 0.04  // the bar counts as held while the grip site is this close to the grasp point
	doorTurnStep = 0.6   // aim this much further along the handle's turn
	doorTurnTo   = 1.5   // turn the handle this far (the latch stops at 1.57)
	doorUnlock   = 1.38  // past this turn the latch clears the frame: pull
	doorPull     = 0.06  // pull the door toward the robot by this much per step
	doorSwung    = 0.05  // once the door has turned this far (rad), keep pulling
	doorDone     = 0.33  // once it has turned this far (the hinge stops at 0.35), let go and hold still
)

// doorFrame derives from a Door observation the door's normal n
// (horizontal, from the handle side into the door), the bar direction
// d = n × z (from the latch axis toward the bar's tip at latch angle 0),
// the turn α = −latch and the latch axis point A on the bar's centre line.
// In the door's frame, door_pos − handle_pos has the horizontal part
// 0.15·(1 − cos α)·d + 0.15·n (the handle site sits handleLever along the
// bar and handleOut in front of the door body's origin), so n is that
// vector turned back by atan2(1 − cos α, 1).
func doorFrame(obs []float64) (n, d, axis [3]float64, alpha float64) {
	door, handle := obs[obsDoorPos:obsDoorPos+3], obs[obsHandlePos:obsHandlePos+3]
	alpha = -obs[obsHandleQpos]
	c, s := math.Cos(alpha), math.Sin(alpha)
	vx, vy := door[0]-handle[0], door[1]-handle[1]
	a, b := handleLever*(1-c), handleOut
	// v = n·(b − i·a) as complex numbers, so n = v·(b + i·a)/(a² + b²).
	nx, ny := vx*b-vy*a, vy*b+vx*a
	l := math.Hypot(nx, ny)
	if l < 1e-9 {
		nx, ny, l = 0, -1, 1
	}
	n = [3]float64{nx / l, ny / l, 0}
	d = [3]float64{n[1], -n[0], 0}
	for i := range 3 {
		axis[i] = handle[i] - handleLever*(c*d[i])
	}
	axis[2] -= handleLever * s
	return n, d, axis, alpha
}

// doorGrip returns the grasp point doorGripR along the bar when the handle
// is turned by alpha, and the bar's unit direction u and its in-plane
// normal v (the fingers' closing axis) there.
func doorGrip(d, axis [3]float64, alpha float64) (p, u, v [3]float64) {
	c, s := math.Cos(alpha), math.Sin(alpha)
	for i := range 3 {
		u[i] = c * d[i]
		v[i] = -s * d[i]
	}
	u[2] += s
	v[2] += c
	for i := range 3 {
		p[i] = axis[i] + doorGripR*u[i]
	}
	return p, u, v
}

// quatMat returns the row-major rotation matrix of the quaternion
// (x, y, z, w), RoboSuite's observation order.
func quatMat(q []float64) [9]float64 {
	x, y, z, w := q[0], q[1], q[2], q[3]
	return [9]float64{
		1 - 2*(y*y+z*z), 2 * (x*y - z*w), 2 * (x*z + y*w),
		2 * (x*y + z*w), 1 - 2*(x*x+z*z), 2 * (y*z - x*w),
		2 * (x*z - y*w), 2 * (y*z + x*w), 1 - 2*(x*x+y*y),
	}
}

// rotVec returns the axis-angle vector (radians) of the rotation matrix r.
func rotVec(r [9]float64) [3]float64 {
	c := math.Max(-1, math.Min(1, (r[0]+r[4]+r[8]-1)/2))
	th := math.Acos(c)
	w := [3]float64{r[7] - r[5], r[2] - r[6], r[3] - r[1]}
	s := math.Sqrt(w[0]*w[0] + w[1]*w[1] + w[2]*w[2])
	if s < 1e-9 {
		if th < 1e-6 {
			return [3]float64{}
		}
		// θ near π: the axis is the column of r + I with the largest norm.
		best, bn := 0, -1.0
		for k := range 3 {
			v := [3]float64{r[k], r[3+k], r[6+k]}
			v[k]++
			if nn := v[0]*v[0] + v[1]*v[1] + v[2]*v[2]; nn > bn {
				best, bn = k, nn
			}
		}
		v := [3]float64{r[best], r[3+best], r[6+best]}
		v[best]++
		l := math.Sqrt(bn)
		return [3]float64{th * v[0] / l, th * v[1] / l, th * v[2] / l}
	}
	return [3]float64{th * w[0] / s, th * w[1] / s, th * w[2] / s}
}

// doorOrient returns the rotation entries of an OSC_POSE action (in
// [-1, 1]) turning the hand (current rotation cur, columns its axes) toward
// pointing along n with its closing axis (right_hand's x) along ±v, the
// sign that keeps its y axis on the side it is on; and the remaining angle.
func doorOrient(cur [9]float64, n, v [3]float64) ([3]float64, float64) {
	y := [3]float64{n[1]*v[2] - n[2]*v[1], n[2]*v[0] - n[0]*v[2], n[0]*v[1] - n[1]*v[0]}
	sg := 1.0
	if y[0]*cur[1]+y[1]*cur[4]+y[2]*cur[7] < 0 {
		sg = -1
	}
	var des [9]float64 // columns: σv, σ(n × v), n
	for i := range 3 {
		des[3*i], des[3*i+1], des[3*i+2] = sg*v[i], sg*y[i], n[i]
	}
	var delta [9]float64 // des · curᵀ
	for i := range 3 {
		for j := range 3 {
			for k := range 3 {
				delta[3*i+j] += des[3*i+k] * cur[3*j+k]
			}
		}
	}
	w := rotVec(delta)
	th := math.Sqrt(w[0]*w[0] + w[1]*w[1] + w[2]*w[2])
	var a [3]float64
	for i := range 3 {
		a[i] = math.Max(-1, math.Min(1, w[i]/OutputMaxRot))
	}
	return a, th
}

// doorAction assembles a 7-D OSC_POSE action: position toward target
// (error × doorGain, clipped), the rotation entries rot and the gripper.
func doorAction(eef []float64, target [3]float64, rot [3]float64, grip float64) []float64 {
	a := make([]float64, doorActDim)
	for i := range 3 {
		a[i] = math.Max(-1, math.Min(1, doorGain*(target[i]-eef[i])/OutputMax))
	}
	copy(a[3:6], rot[:])
	a[6] = grip
	return a
}

// doorGain multiplies the position error before it becomes an action, so
// the OSC's steady-state error (where the posture control pulls against
// the goal) shrinks.
const doorGain = 2

// ScriptedDoor is the Door controller for RoboSuite's default OSC_POSE
// controller, written from the task definition and door_lock.xml's
// geometry: turn the hand to point into the door with the fingers closing
// across the handle bar, come to doorBack in front of the bar doorGripR
// from the latch axis, slide in, close, then turn the handle by moving the
// grasp along its arc about the latch axis while rolling the hand with it,
// and once the latch clears the frame pull the door toward the robot until
// it stands open, then let go.
// Every decision is a function of the current observation: the door's
// normal comes from door_pos − handle_pos, the turn from handle_qpos, the
// hand's orientation from robot0_eef_quat, and the fingers' opening tells
// whether the bar is held.
func ScriptedDoor(obs []float64) []float64 {
	eef := obs[ObsEEFPos : ObsEEFPos+3]
	cur := quatMat(obs[ObsEEFQuat : ObsEEFQuat+4])
	opening := obs[ObsGripperQpos] - obs[ObsGripperQpos+1]
	n, d, axis, alpha := doorFrame(obs)
	grip, _, v := doorGrip(d, axis, alpha)
	var rel [3]float64
	for i := range 3 {
		rel[i] = eef[i] - grip[i]
	}
	along := rel[0]*n[0] + rel[1]*n[1] + rel[2]*n[2] // < 0: in front of the bar
	var perp [3]float64
	for i := range 3 {
		perp[i] = rel[i] - along*n[i]
	}
	off := math.Sqrt(perp[0]*perp[0] + perp[1]*perp[1] + perp[2]*perp[2])
	dist := math.Sqrt(off*off + along*along)
	width := 2 * handleHalfYZ
	holding := opening > width-0.012 && opening < width+0.01 && dist < doorHoldDist
	hinge := obs[obsHingeQpos]
	if hinge > doorDone {
		// Open: release the handle and stay (the hinge has no spring).
		return doorAction(eef, vec3(eef), [3]float64{}, -1)
	}
	if holding {
		tgt := math.Min(alpha+doorTurnStep, doorTurnTo)
		t, _, tv := doorGrip(d, axis, tgt)
		if alpha > doorUnlock || hinge > doorSwung {
			for i := range 3 {
				t[i] -= doorPull * n[i]
			}
		}
		rot, _ := doorOrient(cur, n, tv)
		return doorAction(eef, t, rot, 1)
	}
	rot, oerr := doorOrient(cur, n, v)
	pre := [3]float64{grip[0] - doorBack*n[0], grip[1] - doorBack*n[1], grip[2] - doorBack*n[2]}
	switch {
	case opening < width-0.012:
		// Closed on nothing (or still opening after a miss): open, back off.
		return doorAction(eef, pre, rot, -1)
	case oerr > doorOriTol || off > doorLine:
		if along > -doorBack/2 {
			// Too close to the door to turn or shift: back off first.
			back := [3]float64{eef[0] - 0.05*n[0], eef[1] - 0.05*n[1], eef[2]}
			return doorAction(eef, back, rot, -1)
		}
		return doorAction(eef, pre, rot, -1)
	case along < -0.004 && opening > 0.07:
		return doorAction(eef, grip, rot, -1)
	case along < -0.004:
		return doorAction(eef, vec3(eef), rot, -1) // wait for the fingers to open
	default:
		return doorAction(eef, grip, rot, 1)
	}
}

// vec3 copies the first three entries of v into an array.
func vec3(v []float64) [3]float64 { return [3]float64{v[0], v[1], v[2]} }
