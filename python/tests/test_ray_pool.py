"""The Ray engine's actor pool (parity._ray_engine._Pool) on a stand-in for
Ray that runs each actor's calls in order, as Ray runs a plain actor's: every
entry comes back once, chunks are guided (large first, small at the end), and
an actor that dies fails every call it had in flight, which go to it again
once it restarts, while only the chunk it had started counts as run again.
Not marked `ray`: no cluster starts."""
import collections

import pytest

from parity import _ray_engine as engine


class _ActorError(Exception):
    pass


class _Ray:
    """ray.wait / ray.get / ray.exceptions.RayActorError over _Actor calls:
    each actor answers its oldest call first; `deaths` maps an actor's number
    to the calls (counted from 1) during which it dies."""

    exceptions = collections.namedtuple("E", "RayActorError")(_ActorError)

    def __init__(self, deaths=None):
        self.deaths = {k: set(v) for k, v in (deaths or {}).items()}
        self.queues = collections.defaultdict(collections.deque)  # actor -> its calls not answered yet
        self.answers = {}
        self.ran = collections.Counter()  # entry index -> times a call holding it started

    def wait(self, refs, num_returns):
        assert num_returns == 1 and refs
        answered = [r for r in refs if r in self.answers]  # failed with their actor, not yet collected
        if answered:
            return answered[:1], []
        actor = min((a for a in self.queues if self.queues[a]), key=lambda a: a.number)
        ref = self.queues[actor].popleft()
        actor.calls += 1
        self.ran.update(i["index"] for i in ref.chunk)
        if actor.calls in self.deaths.get(actor.number, ()):  # it dies running this call: all in flight fail
            for r in [ref, *self.queues[actor]]:
                self.answers[r] = _ActorError(f"actor {actor.number} died")
            self.queues[actor].clear()
        else:
            self.answers[ref] = ([(i["index"], b"row %d" % i["index"]) for i in ref.chunk], (0.0, 0.0, 0.0))
        return [ref], []

    def get(self, ref):
        answer = self.answers.pop(ref)
        if isinstance(answer, Exception):
            raise answer
        return answer


class _Ref:
    def __init__(self, chunk):
        self.chunk = chunk


class _Actor:
    def __init__(self, ray, number):
        self.number, self.calls = number, 0
        outer = self

        class _Run:
            @staticmethod
            def remote(chunk):
                ref = _Ref(chunk)
                ray.queues[outer].append(ref)
                return ref

        self.run = _Run()


def _run(items, actors=2, deaths=None, most=64):
    ray = _Ray(deaths)
    pool = engine._Pool(ray, [_Actor(ray, n) for n in range(actors)], items, most)
    rows, sizes = {}, []
    for chunk in pool.results():
        sizes.append(len(chunk))
        for index, row in chunk:
            assert index not in rows, f"entry {index} came back twice"
            rows[index] = row
    return rows, sizes, sorted(set(pool.repeated)), ray


def _items(n):
    return [{"index": i, "record": "{}"} for i in range(n)]


def test_every_entry_comes_back_once_in_guided_chunks():
    rows, sizes, repeated, ray = _run(_items(1000))
    assert rows == {i: b"row %d" % i for i in range(1000)} and repeated == []
    assert sizes[0] == 64 and max(sizes) == 64 and min(sizes) == 1 and sum(sizes) == 1000 and len(sizes) == 44
    assert all(n == 1 for n in ray.ran.values())


def test_chunk_sizes_shrink_to_one_and_obey_the_limit():
    assert engine._chunk_size(1000, 2, 64) == 64
    assert engine._chunk_size(100, 2, 64) == 13
    assert engine._chunk_size(3, 2, 64) == 1
    assert engine._chunk_size(1000, 2, 10) == 10
    rows, sizes, _, _ = _run(_items(5), actors=4)
    assert sorted(rows) == [0, 1, 2, 3, 4] and set(sizes) == {1}


@pytest.mark.parametrize("call", [1, 3])
def test_an_actor_that_dies_has_only_the_chunk_it_had_started_counted_as_run_again(call):
    rows, _, repeated, ray = _run(_items(1000), deaths={0: {call}})
    assert rows == {i: b"row %d" % i for i in range(1000)}
    started_twice = sorted(i for i, n in ray.ran.items() if n > 1)
    assert repeated == started_twice and len(repeated) == 64  # the one it ran, not the one queued behind it


def test_an_actor_that_dies_twice_is_counted_each_time():
    rows, _, repeated, ray = _run(_items(1000), deaths={1: {1, 2}})
    assert len(rows) == 1000 and repeated == sorted(i for i, n in ray.ran.items() if n > 1) and repeated


def test_a_chunk_whose_actor_always_dies_fails_the_run():
    with pytest.raises(RuntimeError, match=r"the actor running entries \d+ to \d+ failed 3 times: actor 0 died"):
        _run(_items(100), deaths={0: set(range(1, 100))})
