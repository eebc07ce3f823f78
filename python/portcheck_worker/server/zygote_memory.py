"""How many zygotes the fork server keeps, and which it retires: package zygotes and bases
together stay within a share of the server's allowance (`--worker-max-rss`), counted by
proportional set size, and within a number. A zygote still importing counts at the largest size
seen (its import has not reached its size yet). Before a new one starts, idle ones are retired,
least recently used first; one that work waits on, or whose forked zygotes live on, is kept.
"""

SHARE_OF_SERVER_RSS = 0.5  # of the server's memory allowance, for its zygotes and bases
MOST = 24  # zygotes and bases alive at once


class Room:
    """The live zygotes' footprint against `budget` bytes and MOST zygotes."""

    def __init__(self, live, budget, most=MOST):
        self.sizes = {z: z.pss() for z in live}
        self.largest = max(self.sizes.values(), default=0)
        self.total = sum(size if z.ready else max(size, self.largest) for z, size in self.sizes.items())
        self.count = len(live)
        self.budget, self.most = budget, most

    def fits(self):
        """Whether one more zygote of the largest size fits."""
        return self.total + self.largest <= self.budget and self.count < self.most

    def to_retire(self, keep, has_children):
        """The idle zygotes to retire, least recently used first, until one more fits; each is
        taken out of the count. `keep` is never named; `has_children(z)`: zygotes it forked live."""
        chosen = []
        for zygote in sorted((z for z in self.sizes if not z.retiring and z is not keep), key=lambda z: z.last_used):
            if self.fits():
                break
            if not zygote.ready or zygote.busy() or has_children(zygote):
                continue  # work waits on it, or zygotes it forked live on
            self.total -= self.sizes[zygote]
            self.count -= 1
            chosen.append(zygote)
        return chosen
