# A small valid description: the base of the bad-description cases (tests/symbolic/bad_descriptions.tsv).
name = "base"
summary = "a particle on the plane with a heading that steers it"
reference = "test case"
x, y, a = coordinates("x y a", kinds={"a": "angle"})
k = parameter("k", 1.0, range=(0, 10), help="stiffness")
mass = [1, 1, 1]
potential = k / 2 * (x**2 + y**2)
constraints = [[-sin(a), cos(a), 0]]
# basis
presets = [state("still", "turning on the spot", q=[0, 0, 0], v=[0, 0, 1])]
sampler = {x: normal(0, 1), y: normal(0, 1), a: uniform(-pi, pi)}
observers = [observer("speed", sqrt(velocity(x)**2 + velocity(y)**2), help="speed of the particle")]
