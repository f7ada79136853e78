# The knife edge on an inclined plane of systems/knife.c (Modin & Verdier 2020, eq. 13) as a description
# for nhens-symbolic: the generated plugin agrees with the built-in `knife` on every callback to round-off
# (ctest -R symbolic). No m columns of A have a constant determinant, so the basis (along the blade and
# the turning) is given.
name = "knife-symbolic"
summary = "knife edge on an inclined plane, optionally perturbed (Modin & Verdier 2020, eq. 13), from SymPy"
reference = "Modin & Verdier 2020 Sect. 2.2.2"

x1, x2, xi = coordinates("x1 x2 xi", kinds={"x2": "ignorable", "xi": "angle"})
eps = parameter("eps", 0.0, range=(-0.9, 0.9), help="perturbation of the constraint [-sin xi, cos xi - eps]")

potential = -x1
constraints = [[-sin(xi), cos(xi) - eps, 0]]
basis = Matrix([[cos(xi) - eps, 0], [sin(xi), 0], [0, 1]])
presets = [
    state("modin2020-fig4", "Modin & Verdier 2020, Sect. 3.1 / Fig. 4: horizontal skate turned by the driver",
          q=[0, 0, pi / 2], v=[0, 0, 1]),
]
sampler = {x1: uniform(-1, 1), x2: uniform(-1, 1), xi: uniform(0, 2 * pi)}
