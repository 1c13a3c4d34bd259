"""HLE-like question generators for computer science, biology/genetics, economics/finance and linguistics.

See `lab.world.question_kit` for the conventions (difficulty scaling, code vs reasoning items).
"""

from __future__ import annotations

import math
import random

from lab.world.names import NameForge
from lab.world.question_kit import Item, choice, computed, scaled

# ---- computer science ----------------------------------------------------------------------------


def _loop_snippet(rng: random.Random, level: str) -> str:
    n = rng.randint(*scaled(level, (5, 12), (20, 60), (100, 400)))
    if level == "easy":
        start = rng.choice(["0", "i", "i + 1"])
        return f"count = 0\nfor i in range({n}):\n    for j in range({start}, {n}):\n        count += 1\n"
    m, r = rng.randint(3, 9), 0
    r = rng.randint(0, m - 1)
    if level == "medium":
        step = rng.randint(2, 4)
        return (f"count = 0\nfor i in range({n}):\n    for j in range(i, {n}, {step}):\n"
                f"        if (i * j) % {m} == {r}:\n            count += 1\n")
    update = rng.choice(["j += i", "j *= 2", "j += i + 1"])
    return (f"count = 0\nfor i in range(1, {n}):\n    j = i\n    while j < {n}:\n"
            f"        if (i + j) % {m} == {r}:\n            count += 1\n        {update}\n")


def loop_count(rng: random.Random, level: str) -> Item:
    snippet = _loop_snippet(rng, level)
    scope: dict = {}
    exec(snippet, scope)  # our own generated snippet: simulating it is how the answer is defined
    q = f"After this Python code runs, what is the value of `count`?\n```python\n{snippet}```"
    return computed(q, scope["count"], snippet + "print(count)\n")


def collatz_steps(rng: random.Random, level: str) -> Item:
    start = rng.randint(*scaled(level, (5, 40), (100, 10**4), (10**5, 10**9)))
    steps, x = 0, start
    while x != 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        steps += 1
    code = f"""
n, steps = {start}, 0
while n != 1:
    n = n // 2 if n % 2 == 0 else 3 * n + 1
    steps += 1
print(steps)
"""
    q = (f"Starting from n = {start}, repeatedly replace n by n/2 if n is even and by 3n + 1 if n is odd. "
         "How many replacements are needed to reach 1?")
    return computed(q, steps, code)


_COMPLEXITY_SNIPPETS = [
    ("O(log n)", "i = n\nwhile i > 1:\n    i //= {k}\n"),
    ("O(n)", "total = 0\nfor i in range(n):\n    total += i * {k}\n"),
    ("O(n)", "i = 0\nwhile i < n:\n    i += {k}\n"),
    ("O(n log n)", "for i in range(n):\n    j = 1\n    while j < n:\n        j *= {k}\n"),
    ("O(n^2)", "for i in range(n):\n    for j in range(i, n, {k}):\n        pass\n"),
    ("O(n^3)", "for i in range(n):\n    for j in range(n):\n        for t in range(0, n, {k}):\n            pass\n"),
    ("O(sqrt(n))", "i = 1\nwhile i * i < n:\n    i += {k}\n"),
    ("O(n^2)", "i = 1\nwhile i < n * n:\n    i += {k}\n"),
    ("O(log n)", "i = 1\nwhile i < n:\n    i *= {k}\n"),
]
_COMPLEXITIES = ["O(log n)", "O(sqrt(n))", "O(n)", "O(n log n)", "O(n^2)", "O(n^3)"]


def big_o(rng: random.Random, level: str) -> Item:
    # Hard items use the snippets whose surface look misleads (a single loop that is quadratic).
    pool = scaled(level, _COMPLEXITY_SNIPPETS[:4], _COMPLEXITY_SNIPPETS[:6], _COMPLEXITY_SNIPPETS[5:])
    correct, template = rng.choice(pool)
    snippet = template.format(k=rng.randint(2, 5))
    wrong = rng.sample([c for c in _COMPLEXITIES if c != correct], 3)
    q = f"What is the asymptotic running time of this code as a function of n?\n```python\n{snippet}```"
    return choice(rng, q, correct, wrong)


# ---- biology / genetics --------------------------------------------------------------------------


def hardy_weinberg_carriers(rng: random.Random, level: str) -> Item:
    affected = round(rng.uniform(*scaled(level, (1, 25), (0.05, 5), (0.001, 0.1))), 4)  # percent
    q2 = affected / 100
    carriers = round(2 * math.sqrt(q2) * (1 - math.sqrt(q2)) * 100, 3)
    code = f"""
q = ({affected} / 100) ** 0.5   # recessive allele frequency
p = 1 - q
print(round(2 * p * q * 100, 3))
"""
    q = (f"In a population in Hardy-Weinberg equilibrium, {affected}% of individuals show an autosomal recessive "
         "trait. What percentage of the population are heterozygous carriers? Round to 3 decimal places.")
    return computed(q, carriers, code, tolerance=1e-3)


def gc_sequences(rng: random.Random, level: str) -> Item:
    n = rng.randint(*scaled(level, (4, 8), (12, 30), (40, 120)))
    k = rng.randint(1, n - 1)
    answer = math.comb(n, k) * 2**n
    code = f"""
# dp[g] = sequences so far with g letters from {{G, C}}; each position has 2 GC and 2 AT choices
n, k = {n}, {k}
dp = [1] + [0] * n
for _ in range(n):
    dp = [2 * dp[g] + (2 * dp[g - 1] if g else 0) for g in range(n + 1)]
print(dp[k])
"""
    q = f"How many DNA sequences of length {n} (over A, C, G, T) contain exactly {k} letters that are G or C?"
    return computed(q, answer, code)


_CROSSES = [  # (cross, question about offspring, probability as a fraction string, plausible wrong ones)
    ("Aa x Aa", "show the recessive phenotype", "1/4", ["1/2", "3/4", "1/16"]),
    ("Aa x aa", "show the recessive phenotype", "1/2", ["1/4", "3/4", "1/8"]),
    ("AaBb x AaBb", "show both dominant phenotypes", "9/16", ["3/16", "1/16", "3/4"]),
    ("AaBb x AaBb", "show both recessive phenotypes", "1/16", ["1/4", "9/16", "3/16"]),
    ("AaBb x AaBb", "show exactly one of the two dominant phenotypes", "3/8", ["9/16", "3/16", "1/4"]),
    ("AaBb x aabb", "show both recessive phenotypes", "1/4", ["1/16", "1/2", "3/16"]),
    ("AaBbCc x AaBbCc", "show all three dominant phenotypes", "27/64", ["9/64", "3/4", "1/64"]),
    ("AaBbCc x aabbcc", "show all three recessive phenotypes", "1/8", ["1/64", "1/4", "27/64"]),
]


def cross_probability(rng: random.Random, level: str) -> Item:
    cross, what, correct, wrong = rng.choice(scaled(level, _CROSSES[:2], _CROSSES[2:6], _CROSSES[4:]))
    species = NameForge(rng).river()  # an invented species name
    q = (f"In the fictional plant {species}, each gene listed assorts independently and shows complete dominance. "
         f"In the cross {cross}, what fraction of offspring {what}?")
    return choice(rng, q, correct, wrong)


# ---- economics / finance -------------------------------------------------------------------------


def compound_interest(rng: random.Random, level: str) -> Item:
    principal = rng.randint(1, 500) * 100
    rate = round(rng.uniform(0.5, 12), 2)
    years = rng.randint(*scaled(level, (1, 5), (5, 20), (20, 45)))
    per_year = scaled(level, 1, rng.choice([4, 12]), rng.choice([12, 52, 365]))
    answer = round(principal * (1 + rate / 100 / per_year) ** (per_year * years), 2)
    code = f"""
balance = {principal}
for _ in range({per_year} * {years}):
    balance *= 1 + {rate} / 100 / {per_year}
print(round(balance, 2))
"""
    how = "once a year" if per_year == 1 else f"{per_year} times per year"
    q = (f"${principal:,} is deposited at a nominal annual rate of {rate}% compounded {how}. "
         f"What is the balance after {years} years, in dollars? Round to the cent.")
    return computed(q, answer, code, tolerance=1e-4)


def npv(rng: random.Random, level: str) -> Item:
    flows = [-rng.randint(10, 200) * 1000] + [rng.randint(1, 60) * 1000 for _ in range(scaled(level, 3, 6, 12))]
    rate = round(rng.uniform(2, 15), 2)
    answer = round(sum(cf / (1 + rate / 100) ** t for t, cf in enumerate(flows)), 2)
    code = f"""
flows, r = {flows}, {rate} / 100
value, discount = 0.0, 1.0
for cf in flows:
    value += cf * discount
    discount /= 1 + r
print(round(value, 2))
"""
    q = (f"A project has year-end cash flows {flows} dollars (year 0 first). At a discount rate of {rate}% per "
         "year, what is its net present value in dollars? Round to the cent.")
    return computed(q, answer, code, tolerance=1e-4)


def elasticity(rng: random.Random, level: str) -> Item:
    e = round(rng.uniform(0.2, 3), scaled(level, 1, 2, 2))
    dp = rng.choice(scaled(level, [5, 10, 20], [3, 4, 6, 8], [-7, -3, 2.5, 12]))
    answer = round(-e * dp, 4)
    good = rng.choice(["lantern oil", "river salt", "copper wire", "barley flour"])
    q = (f"The price elasticity of demand for {good} is -{e}. Using the linear (point) approximation, by what "
         f"percentage does quantity demanded change when the price changes by {dp:+}%? Give a signed number.")
    return Item(question=q, answer=answer, answer_type="numeric", tolerance=1e-3)


# ---- linguistics ---------------------------------------------------------------------------------

_RULES = {
    "suffix": lambda w: w + "en",
    "reduplication": lambda w: w[:2] + w,
    "infix": lambda w: w[:2] + "al" + w[2:],
    "prefix": lambda w: "mi" + w,
    "final-vowel": lambda w: w[:-1] + "i" if w[-1] in "aeiou" else w + "i",
}


def morphology(rng: random.Random, level: str) -> Item:
    forge = NameForge(rng)
    lang = forge.region()
    rules = scaled(level, ["suffix", "prefix"], ["reduplication", "final-vowel"], ["infix", "reduplication"])
    rule = rng.choice(rules)
    words = [forge.river().lower() for _ in range(scaled(level, 3, 3, 2) + 1)]
    examples = "; ".join(f"'{w}' -> '{_RULES[rule](w)}'" for w in words[:-1])
    target = words[-1]
    correct = _RULES[rule](target)
    wrong = [f(target) for name, f in _RULES.items() if name != rule]
    q = (f"In the invented language {lang}, plurals are formed by one regular rule. Examples: {examples}. "
         f"What is the plural of '{target}'?")
    return choice(rng, q, f"'{correct}'", [f"'{w}'" for w in wrong if w != correct][:4])


def phonotactic_count(rng: random.Random, level: str) -> Item:
    c, v = rng.randint(5, 20), rng.randint(2, 8)
    n = rng.randint(*scaled(level, (2, 4), (5, 9), (10, 18)))
    # words alternate consonant/vowel, may start with either, and never repeat the same vowel twice running
    answer = 0
    for first_is_c in (True, False):
        slots = ["C" if (i % 2 == 0) == first_is_c else "V" for i in range(n)]
        vowels = slots.count("V")
        answer += c ** slots.count("C") * (v * (v - 1) ** (vowels - 1) if vowels else 1)
    code = f"""
C, V, N = {c}, {v}, {n}
total = 0
for first in ("C", "V"):
    ways, seen_vowel = 1, False
    for i in range(N):
        if (i % 2 == 0) == (first == "C"):
            ways *= C
        else:
            ways *= (V - 1) if seen_vowel else V   # a vowel slot may not repeat the previous vowel
            seen_vowel = True
    total += ways
print(total)
"""
    q = (f"An invented language has {c} consonants and {v} vowels. Its words of length {n} strictly alternate "
         "consonants and vowels (starting with either) and never use the same vowel in two consecutive vowel "
         "slots. How many such words are there?")
    return computed(q, answer, code)


GENERATORS = [
    ("computer_science", loop_count), ("computer_science", collatz_steps), ("computer_science", big_o),
    ("biology", hardy_weinberg_carriers), ("biology", gc_sequences), ("biology", cross_probability),
    ("economics", compound_interest), ("economics", npv), ("economics", elasticity),
    ("linguistics", morphology), ("linguistics", phonotactic_count),
]
