-- wrk script: POST the request bodies of a file (one JSON document per line) in turn, and print
-- the figures as one JSON line at the end (latency percentiles in microseconds).
--   wrk -t1 -c16 -d10s -s bench/wrk/post.lua https://localhost:8443/validate -- bodies.jsonl
local requests = {}
local count = 0
local index = 0

function init(args)
  local headers = { ["Content-Type"] = "application/json" }
  for line in io.lines(args[1]) do
    count = count + 1
    requests[count] = wrk.format("POST", nil, headers, line)
  end
end

function request()
  index = index % count + 1
  return requests[index]
end

function done(summary, latency, _)
  local errors = summary.errors
  io.write(string.format(
    'WRK-JSON {"requests": %d, "duration_us": %d, "p50_us": %d, "p90_us": %d, "p99_us": %d, ' ..
    '"max_us": %d, "socket_errors": %d, "non2xx": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, errors.connect + errors.read + errors.write + errors.timeout,
    errors.status))
end
