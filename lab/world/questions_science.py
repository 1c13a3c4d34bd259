"""HLE-like question generators for mathematics, physics, chemistry and astronomy (see `lab.world.question_kit`).

Each computational generator computes its answer directly and writes a reference program that
computes it a second way where that is cheap (e.g. a DP against a closed form), so the build's
self-check compares two implementations rather than one with itself.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

from lab.world.question_kit import Item, choice, computed, scaled

# ---- mathematics -----------------------------------------------------------------------------------


def modpow(rng: random.Random, level: str) -> Item:
    a = rng.randint(2, scaled(level, 40, 900, 10**6))
    b = rng.randint(scaled(level, 5, 10**3, 10**11), scaled(level, 30, 10**4, 10**12))
    m = rng.randint(scaled(level, 7, 10**3, 10**8), scaled(level, 97, 10**4, 10**9))
    return computed(f"Compute {a}^{b} mod {m}.", pow(a, b, m), f"print(pow({a}, {b}, {m}))")


def coprime_residue_count(rng: random.Random, level: str) -> Item:
    n = rng.randint(*scaled(level, (50, 200), (1000, 5000), (20000, 90000)))
    m = rng.choice([6, 10, 12, 15, 21, 30, 42, 60, 210, 2310][: scaled(level, 4, 7, 10)])
    k = rng.randint(3, scaled(level, 5, 9, 13))
    r = rng.randint(0, k - 1)
    answer = sum(1 for x in range(1, n + 1) if math.gcd(x, m) == 1 and x % k == r)
    if answer == 0:  # the residue class shares a factor with m: a trick question, not a hard one
        return coprime_residue_count(rng, level)
    code = f"""
from math import gcd
count = 0
for x in range(1, {n} + 1):
    if gcd(x, {m}) == 1 and x % {k} == {r}:
        count += 1
print(count)
"""
    q = f"How many integers x with 1 <= x <= {n} satisfy gcd(x, {m}) = 1 and x = {r} (mod {k})?"
    return computed(q, answer, code)


def blocked_lattice_paths(rng: random.Random, level: str) -> Item:
    size = scaled(level, 6, 14, 30)
    a, b = rng.randint(size // 2, size), rng.randint(size // 2, size)
    c, d = rng.randint(1, a - 1), rng.randint(1, b - 1)
    answer = math.comb(a + b, a) - math.comb(c + d, c) * math.comb(a - c + b - d, a - c)
    # The reference counts by dynamic programming over the grid, independently of the closed form.
    code = f"""
a, b, block = {a}, {b}, ({c}, {d})
ways = [[0] * (b + 1) for _ in range(a + 1)]
for x in range(a + 1):
    for y in range(b + 1):
        if (x, y) == block:
            continue
        if x == 0 and y == 0:
            ways[x][y] = 1
        else:
            ways[x][y] = (ways[x - 1][y] if x else 0) + (ways[x][y - 1] if y else 0)
print(ways[a][b])
"""
    q = (f"A path on the integer grid goes from (0, 0) to ({a}, {b}) using unit steps right (+1, 0) or up (0, +1). "
         f"How many such paths never visit the point ({c}, {d})?")
    return computed(q, answer, code)


def largest_power(rng: random.Random, level: str) -> Item:
    target = rng.uniform(*scaled(level, (30, 60), (80, 150), (200, 400)))  # log of the values
    spread = scaled(level, 0.25, 0.06, 0.015)  # relative gap between candidates
    exprs: dict[str, float] = {}
    while len(exprs) < 4:
        base = rng.randint(2, 40)
        exp = max(2, round(target * (1 + rng.uniform(-spread, spread)) / math.log(base)))
        exprs.setdefault(f"{base}^{exp}", exp * math.log(base))
    values = sorted(exprs.items(), key=lambda kv: kv[1])
    if values[-1][1] - values[-2][1] < 1e-9:  # exact tie: not a fair question; nudge the winner
        return largest_power(rng, level)
    correct = values[-1][0]
    return choice(rng, "Which of the following numbers is the largest?", correct, [v[0] for v in values[:-1]])


# ---- physics -------------------------------------------------------------------------------------


def projectile_range(rng: random.Random, level: str) -> Item:
    v = round(rng.uniform(5, scaled(level, 30, 120, 600)), 1)
    angle = rng.randint(10, 80)
    g = scaled(level, 9.81, 9.81, rng.choice([1.62, 3.71, 24.79]))  # hard: another world's gravity
    answer = round(v * v * math.sin(math.radians(2 * angle)) / g, 2)
    code = f"""
import math
v, angle, g = {v}, {angle}, {g}
t = 2 * v * math.sin(math.radians(angle)) / g   # time of flight
print(round(v * math.cos(math.radians(angle)) * t, 2))
"""
    q = (f"A projectile is launched from level ground at {v} m/s, {angle} degrees above the horizontal, where "
         f"g = {g} m/s^2. Ignoring air resistance, how far (in metres) from the launch point does it land? "
         "Round to 2 decimal places.")
    return computed(q, answer, code, tolerance=1e-3)


def bouncing_ball(rng: random.Random, level: str) -> Item:
    h = round(rng.uniform(1, 20), 1)
    e = round(rng.uniform(0.3, 0.9), 2)
    bounces = rng.randint(*scaled(level, (1, 2), (3, 8), (10, 40)))
    answer = round(h + 2 * sum(h * e ** (2 * k) for k in range(1, bounces + 1)), 4)
    code = f"""
height, e, total = {h}, {e}, {h}
for _ in range({bounces}):
    height *= e * e          # rebound height after each bounce
    total += 2 * height      # up and back down
print(round(total, 4))
"""
    q = (f"A ball is dropped from {h} m onto a hard floor. Each bounce returns it to e^2 times its previous height, "
         f"with coefficient of restitution e = {e}. What total distance (in metres) has it travelled when it "
         f"hits the floor for the {_ordinal(bounces + 1)} time? Round to 4 decimal places.")
    return computed(q, answer, code, tolerance=1e-3)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def pendulum_scaling(rng: random.Random, level: str) -> Item:
    k = rng.randint(2, scaled(level, 3, 6, 12))
    length = rng.randint(1, 9) / 10
    if level == "hard":  # square root of a non-square ratio, stated as a fraction
        num, den = k * k + 1, 1
        correct = f"sqrt({num})"
        wrong = [str(num), f"{num}^2", f"1/sqrt({num})"]
    else:
        num, den = k * k, 1
        correct = str(k)
        wrong = [str(k * k), f"sqrt({k})", f"1/{k}"]
    q = (f"A simple pendulum of length {length} m swings with small amplitude. Its length is multiplied by "
         f"{Fraction(num, den)} while g stays the same. By what factor is its period multiplied?")
    return choice(rng, q, correct, wrong)


# ---- chemistry -----------------------------------------------------------------------------------

_MASSES = {"C": 12.011, "H": 1.008, "N": 14.007, "O": 15.999, "S": 32.06, "P": 30.974}


def ideal_gas_pressure(rng: random.Random, level: str) -> Item:
    n = round(rng.uniform(0.1, scaled(level, 2, 10, 50)), 3)
    temp = round(rng.uniform(250, 900), 1)
    vol = round(rng.uniform(0.5, 40), 2)
    answer = round(n * 8.314 * temp / (vol / 1000) / 1000, 2)
    code = f"""
R = 8.314                 # J/(mol K)
n, T, V_litres = {n}, {temp}, {vol}
P_pa = n * R * T / (V_litres / 1000)
print(round(P_pa / 1000, 2))
"""
    q = (f"An ideal gas of {n} mol at {temp} K fills a {vol} L container. Using R = 8.314 J/(mol K), what is its "
         "pressure in kPa? Round to 2 decimal places.")
    return computed(q, answer, code, tolerance=1e-3)


def molar_mass(rng: random.Random, level: str) -> Item:
    elements = scaled(level, ["C", "H", "O"], ["C", "H", "N", "O"], ["C", "H", "N", "O", "S", "P"])
    counts = {el: rng.randint(1, scaled(level, 8, 20, 60)) for el in elements}
    formula = "".join(f"{el}{c}" for el, c in counts.items())
    answer = round(sum(_MASSES[el] * c for el, c in counts.items()), 3)
    table = ", ".join(f"{el} = {_MASSES[el]}" for el in elements)
    code = f"""
masses = {{{", ".join(f"'{el}': {_MASSES[el]}" for el in elements)}}}
counts = {counts!r}
print(round(sum(masses[el] * c for el, c in counts.items()), 3))
"""
    q = f"Using atomic masses {table} (g/mol), what is the molar mass of {formula} in g/mol? Round to 3 decimals."
    return computed(q, answer, code, tolerance=1e-4)


def half_life_fraction(rng: random.Random, level: str) -> Item:
    half_life = rng.randint(2, 90)
    k = rng.randint(*scaled(level, (2, 3), (4, 6), (7, 10)))
    iso = rng.choice(["Xr-91", "Vl-203", "Qm-58", "Td-144", "Zn-77*"])
    correct = f"1/{2 ** k}"
    wrong = [f"1/{2 ** (k - 1)}", f"1/{2 * k}", f"1/{k * k if k * k != 2 ** k else k * k + 1}", f"1/{2 ** (k + 1)}"]
    q = (f"The fictional isotope {iso} has a half-life of {half_life} days. What fraction of a pure sample remains "
         f"undecayed after {half_life * k} days?")
    return choice(rng, q, correct, wrong)


# ---- astronomy -----------------------------------------------------------------------------------


def kepler_period(rng: random.Random, level: str) -> Item:
    a = round(rng.uniform(0.2, scaled(level, 5, 40, 300)), 3)
    mass = round(rng.uniform(*scaled(level, (1.0, 1.0), (0.3, 3), (0.08, 25))), 2)
    answer = round(math.sqrt(a**3 / mass), 3)
    code = f"""
a_au, m_sun = {a}, {mass}
# Kepler's third law in solar units: P^2 = a^3 / M
print(round((a_au ** 3 / m_sun) ** 0.5, 3))
"""
    q = (f"A planet of negligible mass orbits a star of {mass} solar masses on an orbit with semi-major axis "
         f"{a} AU. What is its orbital period in years? Round to 3 decimal places.")
    return computed(q, answer, code, tolerance=1e-3)


def escape_velocity(rng: random.Random, level: str) -> Item:
    mass = round(rng.uniform(0.1, scaled(level, 10, 500, 5e5)), 2)  # units of 10^24 kg
    radius = round(rng.uniform(1000, scaled(level, 10000, 80000, 700000)), 1)  # km
    answer = round(math.sqrt(2 * 6.674e-11 * mass * 1e24 / (radius * 1000)) / 1000, 3)
    code = f"""
import math
G = 6.674e-11
M = {mass} * 10**24      # kg
r = {radius} * 1000      # m
print(round(math.sqrt(2 * G * M / r) / 1000, 3))
"""
    q = (f"A spherical body has mass {mass} x 10^24 kg and radius {radius} km. Using G = 6.674e-11 N m^2/kg^2, "
         "what is its surface escape velocity in km/s? Round to 3 decimal places.")
    return computed(q, answer, code, tolerance=1e-3)


def magnitude_ratio(rng: random.Random, level: str) -> Item:
    diff = scaled(level, rng.choice([5, 10]), rng.choice([2.5, 7.5, 15]), rng.choice([12.5, 17.5, 20]))
    ratio = 10 ** (0.4 * diff)
    correct = f"{ratio:.4g}"
    wrong = [f"{10 ** (0.2 * diff):.4g}", f"{diff * 2.512:.4g}", f"{10 ** (0.5 * diff):.4g}", f"{2 ** diff:.4g}"]
    m1 = round(rng.uniform(-1, 8), 1)
    q = (f"Star A has apparent magnitude {m1} and star B has apparent magnitude {round(m1 + diff, 1)}. "
         "How many times brighter does star A appear than star B?")
    return choice(rng, q, correct, wrong)


GENERATORS = [
    ("mathematics", modpow), ("mathematics", coprime_residue_count), ("mathematics", blocked_lattice_paths),
    ("mathematics", largest_power), ("physics", projectile_range), ("physics", bouncing_ball),
    ("physics", pendulum_scaling), ("chemistry", ideal_gas_pressure), ("chemistry", molar_mass),
    ("chemistry", half_life_fraction), ("astronomy", kepler_period), ("astronomy", escape_velocity),
    ("astronomy", magnitude_ratio),
]
