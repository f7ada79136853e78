# The Chaplygin sleigh of systems/sleigh.c (Celledoni et al. 2019, Sect. 4.2) as a description for
# nhens-symbolic: a configuration-dependent mass matrix M(theta), whose derivative is derived. The
# generated plugin agrees with the built-in `sleigh` on every callback to round-off (ctest -R symbolic).
# The basis is the built-in's orthonormal one (g = X^T M X = I), given.
name = "sleigh-symbolic"
summary = "Chaplygin sleigh, configuration-dependent mass matrix (Celledoni et al. 2019, Sect. 4.2), from SymPy"
reference = "Celledoni et al. 2019 Sect. 4.2, eqs. 22-23, Prop. 4.1"

x1, x2, theta = coordinates("x1 x2 theta", kinds={"x1": "ignorable", "x2": "ignorable", "theta": "angle"})
J = parameter("J", 8.0, range=(1e-6, 1e6), help="moment of inertia about the centre of mass")
a = parameter("a", 1.0, range=(0, 1e3), help="distance from the centre of mass to the blade's contact point")
m = parameter("m", 1.0, range=(1e-6, 1e6), help="mass")

mass = Matrix([[m, 0, -m * a * sin(theta)],
               [0, m, m * a * cos(theta)],
               [-m * a * sin(theta), m * a * cos(theta), J + m * a**2]])
potential = 0
constraints = [[-sin(theta), cos(theta), 0]]
basis = Matrix([[0, cos(theta) / sqrt(m)], [0, sin(theta) / sqrt(m)], [1 / sqrt(J + m * a**2), 0]])

# Celledoni et al. 2019, Fig. 3 give rho = (+-0.001, -0.6) at theta = 0.1: v = rho1 X_1 + rho2 X_2
fig3 = {"J": 8, "a": 1, "m": 1}
presets = [
    state("celledoni2019-fig3-plus", "Celledoni et al. 2019, Fig. 3: J = 8, a = m = 1, x = (-5, 0), theta = 0.1, "
          "rho = (+0.001, -0.6); run with h = 0.5", q=[-5, 0, 0.1],
          v=[-0.6 * 0.99500416527802582, -0.6 * 0.099833416646828155, 0.001 / 3.0], params=fig3),
    state("celledoni2019-fig3-minus", "Celledoni et al. 2019, Fig. 3: as -plus with rho1 = -0.001", q=[-5, 0, 0.1],
          v=[-0.6 * 0.99500416527802582, -0.6 * 0.099833416646828155, -0.001 / 3.0], params=fig3),
]
sampler = {x1: uniform(-5, 5), x2: uniform(-5, 5), theta: uniform(0, 2 * pi)}
