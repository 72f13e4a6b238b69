-- The update step of examples/embed's particle simulation, a script the host runs: edit it
-- and run the host again, no rebuild. The host sets x, y, vx and vy (its own float32
-- buffers, shared without a copy) and calls step(dt) once a frame.
--
-- Particles fall under gravity in the unit box and bounce off its walls, losing a little
-- speed at each bounce. One kernel moves every particle; luda compiles it for where the
-- arrays are (the cpu, or a GPU when the host passes arrays of a GPU).

gravity, restitution = -9.81, 0.9

local move = luda.elementwise(
  "T x, T y, T vx, T vy, T dt, T g, T e",
  "T x1, T y1, T vx1, T vy1",
  [[
  vx1 = vx
  vy1 = vy + g * dt
  x1 = x + vx1 * dt
  y1 = y + vy1 * dt
  if x1 < 0 then x1 = -x1; vx1 = -vx1 * e end
  if x1 > 1 then x1 = 2 - x1; vx1 = -vx1 * e end
  if y1 < 0 then y1 = -y1; vy1 = -vy1 * e end
  if y1 > 1 then y1 = 2 - y1; vy1 = -vy1 * e end
  ]],
  "move")

function step(dt)
  -- The outputs are the inputs: each particle is updated in place.
  move(x, y, vx, vy, dt, gravity, restitution, x, y, vx, vy)
end

-- A new array for the host: each particle's kinetic energy (unit mass).
function energy()
  return 0.5 * (vx * vx + vy * vy)
end
