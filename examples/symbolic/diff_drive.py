# A differential-drive robot on the plane, tethered to the origin by a spring: a description for
# nhens-symbolic (docs/guide/symbolic.md), which derives every callback and builds the plugin.
#
# q = (x, y, theta, phi_L, phi_R): the axle's midpoint, the heading and the two wheel angles. The wheels
# (radius r, at distance b either side of the midpoint) roll without slipping:
#   no lateral slip       -x' sin(theta) + y' cos(theta)          = 0
#   left wheel rolls       x' cos(theta) + y' sin(theta) - b theta' = r phi_L'
#   right wheel rolls      x' cos(theta) + y' sin(theta) + b theta' = r phi_R'
name = "diff-drive"
summary = "differential-drive robot with a spring on its position (two rolling wheels, no lateral slip)"
reference = "differential-drive kinematics: each wheel rolls without slipping, the axle does not slide sideways"

x, y, theta, phi_L, phi_R = coordinates("x y theta phi_L phi_R",
                                        kinds={"theta": "angle", "phi_L": "ignorable", "phi_R": "ignorable"})
r = parameter("r", 0.5, range=(0.01, 10), help="wheel radius")
b = parameter("b", 0.4, range=(0.01, 10), help="half the axle length")
k = parameter("k", 1.0, range=(0, 100), help="stiffness of the spring on the position")
mass_body = parameter("mass", 2.0, range=(0.01, 100), help="mass of the body")
inertia = parameter("inertia", 0.3, range=(0.001, 100), help="moment of inertia of the body about the vertical")
wheel = parameter("wheel_inertia", 0.05, range=(0.001, 100), help="moment of inertia of a wheel about its axle")

mass = [mass_body, mass_body, inertia, wheel, wheel]
potential = k / 2 * (x**2 + y**2)
constraints = [
    [-sin(theta), cos(theta), 0, 0, 0],
    [cos(theta), sin(theta), -b, -r, 0],
    [cos(theta), sin(theta), b, 0, -r],
]
# basis: derived by elimination (the wheel speeds are the coordinates of D_q)

# driving forward at unit wheel speed, heading along x, 1 m from the spring's anchor
presets = [
    state("forward", "straight ahead at phi_L' = phi_R' = 1 from (1, 0): H = 0.8",
          q=[1, 0, 0, 0, 0], v=[0.5, 0, 0, 1, 1]),
    shell("shell", "64 random states on H = 1", energy=1.0, ensemble=64),
]
sampler = {x: normal(0, 1), y: normal(0, 1), theta: uniform(-pi, pi), phi_L: fixed(0), phi_R: fixed(0)}

# quantities of the user's own, recorded like nhens' built-in observers (--observe, --reduce)
observers = [
    observer("distance", sqrt(x**2 + y**2), help="distance of the axle's midpoint from the spring's anchor"),
    observer("wheel_speed", [velocity(phi_L), velocity(phi_R)], help="angular speeds of the left and right wheels"),
]
