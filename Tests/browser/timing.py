"""Reading a player's recorded events against the animation-frame clock.

The page records every `requestAnimationFrame` timestamp (conftest.RECORDER); the player stamps
its `play` and `frame` events with the timestamp of the animation frame that drew them. A frame
change is on time when it happened on the *first* animation frame at or after the moment it was
due: never on an earlier one (early), never on a later one (late by more than one animation
frame). That is "within one animation frame" stated without a wall-clock tolerance, so a busy
machine that drops animation frames does not make it fail: due times come from the delay table.

The player's one exception is modelled too: when a change comes so late that the time left over
is a whole delay of the frame just shown (the page missed animation frames for that long, as a
busy machine does), that frame starts its full delay at the change instead of hurrying the next.
"""

EPSILON_MS = 1e-6


def first_tick_at_or_after(ticks, due):
    return next((t for t in ticks if t >= due - EPSILON_MS), None)


def check_changes(changes, ticks, delays, start_index, t0, rate=1.0, frame_count=None):
    """`changes`: the frame events after play, in order, as (index, time). Checks that they
    follow each other without a skip and that each is on the first animation frame at or after
    its due time. Returns the lateness of each change in ms."""
    frame_count = frame_count or len(delays)
    due = t0
    previous = start_index
    lateness = []
    for index, time in changes:
        expected = (previous + 1) % frame_count
        assert index == expected, f"frame {expected} was skipped: {index} came after {previous}"
        due += delays[previous] / rate
        assert time >= due - EPSILON_MS, f"frame {index} shown {due - time:.3f} ms early"
        on_tick = first_tick_at_or_after(ticks, due)
        assert on_tick is not None and abs(on_tick - time) < EPSILON_MS, (
            f"frame {index} was due at {due:.3f} and shown at {time:.3f}, "
            f"but an animation frame at {on_tick} came first")
        lateness.append(time - due)
        if (time - due) * rate >= delays[index] - EPSILON_MS:
            due = time
        previous = index
    return lateness
