-- A store made by perfatlas at schema version 3 (commit 01c1450, warnings stored as sentences):
-- run 1: perfatlas measure mem.latency bytes=64KiB samples=3 min_sample_time=1ms; run 2: a
-- two-metric document stored with that version's result_warnings plus one sentence of no known
-- kind, and a scenario whose job sleepy#1 fails the accounting check. sqlite3 .dump of it;
-- tests/test_warnings.py migrates it.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES(3);
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    started     TEXT NOT NULL,
    finished    TEXT,
    status      TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    host        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    topology    TEXT NOT NULL,   -- perfatlas.topology/1 JSON
    context     TEXT NOT NULL,   -- kernel, governor, THP, compiler, MPI, environment ... JSON
    suite       TEXT,
    argv        TEXT NOT NULL,   -- JSON list
    software    TEXT NOT NULL    -- JSON: perfatlas, python, libraries
);
INSERT INTO runs VALUES(1,'2026-11-25T12:36:03+00:00','2026-11-25T12:36:03+00:00','complete','vm',14657,'adc056bf2c7ccfe3','{"schema": "perfatlas.topology/1", "hwloc_version": "2.9.0", "cpu_model": "AMD EPYC", "packages": 1, "cores": 2, "pus": [{"os_index": 0, "core": 0, "package": 0, "numa_node": 0}, {"os_index": 1, "core": 1, "package": 0, "numa_node": 0}], "numa_nodes": [{"os_index": 0, "memory_bytes": 9624051712, "cpus": "0-1", "subtype": null, "memory_only": false, "memory_side_cache": null}], "numa_distances": [[10]], "numa_distances_source": "identity: the operating system reports no NUMA distances", "caches": [{"level": 1, "type": "data", "size_bytes": 32768, "line_bytes": 64, "cpus": "0", "count": 2}, {"level": 2, "type": "unified", "size_bytes": 1048576, "line_bytes": 64, "cpus": "0", "count": 2}, {"level": 3, "type": "unified", "size_bytes": 33554432, "line_bytes": 64, "cpus": "0-1", "count": 1}], "huge_page_sizes": [2097152, 1073741824], "cpu_kinds": [{"cpus": "0-1", "efficiency": 0}], "this_system": true, "timer": {"source": "rdtsc (invariant TSC)", "resolution_ns": 20.029765600589652, "tsc_hz": 2596136222.3065248}, "build": {"compiler": "GNU 12.2.0", "cflags": "-O3 -march=native", "arch": "native (znver3)", "isa": ["sse3", "ssse3", "sse4.1", "sse4.2", "sse4a", "popcnt", "lahf_lm", "cmpxchg16b", "movbe", "lzcnt", "bmi", "bmi2", "adx", "aes", "pclmul", "sha", "f16c", "avx", "avx2", "fma", "gfni", "vaes", "vpclmulqdq", "avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx512ifma", "avx512vbmi", "avx512vbmi2", "avx512vnni", "avx512bitalg", "avx512vpopcntdq", "avx512bf16"]}}','{"hostname": "vm", "cpu_model": "AMD EPYC", "kernel": "Linux 6.18.44-fc-v595 #1 SMP PREEMPT_DYNAMIC @0", "cpu_max_hz": null, "governor": "no cpufreq interface (frequency not controlled by the OS here)", "thp": "madvise", "clocksource": "tsc", "hugepages_2MiB": "0", "cpus_allowed": "0-1", "native_build": {"compiler": "GNU 12.2.0", "cflags": "-O3 -march=native", "arch": "native (znver3)", "isa": ["sse3", "ssse3", "sse4.1", "sse4.2", "sse4a", "popcnt", "lahf_lm", "cmpxchg16b", "movbe", "lzcnt", "bmi", "bmi2", "adx", "aes", "pclmul", "sha", "f16c", "avx", "avx2", "fma", "gfni", "vaes", "vpclmulqdq", "avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx512ifma", "avx512vbmi", "avx512vbmi2", "avx512vnni", "avx512bitalg", "avx512vpopcntdq", "avx512bf16"]}, "mpi": "mpirun (Open MPI) 4.1.4", "environment": {"PERFATLAS_BIN_DIR": "/work/wt-warnings/.venv/lib/python3.11/site-packages/perfatlas/bin"}, "llc": {"hwloc_bytes": 33554432, "effective_bytes": null, "used": "hwloc", "why": "not probed (no size of this run is relative to the LLC)"}}',NULL,'["make.py"]','{"perfatlas": "0.1.0", "python": "3.11.7", "numpy": "2.4.6"}');
INSERT INTO runs VALUES(2,'2026-11-25T12:36:03+00:00','2026-11-25T12:36:03+00:00','complete','vm',14657,'f','{}','{}','legacy','["x"]','{}');
CREATE TABLE results (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs(id),
    benchmark      TEXT NOT NULL,
    params         TEXT NOT NULL,  -- JSON
    bytes          INTEGER,        -- hot parameters, indexed
    threads        INTEGER,
    metric         TEXT NOT NULL,
    unit           TEXT NOT NULL,
    samples        TEXT NOT NULL,  -- JSON list, every repetition
    n              INTEGER NOT NULL,
    median         REAL,
    ci_lo          REAL,
    ci_hi          REAL,
    min            REAL,
    max            REAL,
    not_measurable TEXT,           -- why, when the measurement cannot be made here
    warnings       TEXT NOT NULL,  -- JSON list of sentences
    document       TEXT NOT NULL   -- the native JSON document (placement, timer, derived, build)
);
INSERT INTO results VALUES(1,1,'mem.latency','{"bytes": 65536, "chain": "page", "cpu": 0, "cpus": [0], "min_sample_time": 0.001, "node": "local", "owner": 0, "page": 4096, "samples": 3, "seed": 1}',65536,1,'latency_ns','ns','[20.239200415775745, 2.6861892797246143, 2.6779774313090465]',3,2.6861892797246142983,2.6779774313090465298,20.239200415775744801,2.6779774313090465298,20.239200415775744801,NULL,'["unstable: coefficient of variation 118.8% exceeds 5%; stop other load, pin threads, or raise samples= / --repeat", "only 3 samples: the interval is the full range with 75% coverage; use samples=6 or more for a 95 % CI"]','{"schema": "perfatlas.result/1", "benchmark": "mem.latency", "params": {"bytes": 65536, "chain": "page", "page": 4096, "cpus": [0], "node": "local", "samples": 3, "min_sample_time": 0.001, "seed": 1, "cpu": 0, "owner": 0}, "placement": {"threads": [{"thread": 0, "cpu_requested": 0, "cpus_allowed": "0"}], "mempolicy": "local", "mempolicy_applied": "local", "pages_on_node": {"0": 1}, "page_bytes": 4096, "huge_page_fraction": 0, "huge_page_source": null}, "timer": {"source": "rdtsc (invariant TSC)", "resolution_ns": 20.029765608041842, "tsc_hz": 2596136221.340617}, "samples": {"latency_ns": [20.239200415775745, 2.6861892797246143, 2.6779774313090465]}, "units": {"latency_ns": "ns"}, "sample_seconds": [0.009305498610363708, 0.0012350453622746642, 0.0012312697514575482], "derived": {"lines": 1024, "line_bytes": 64, "loads_per_sample": 459776, "chain": "page", "page_bytes": 4096}, "execution": {"threads": [{"tid": 14674, "name": "pa-mem-latency", "cpu": 0, "cpus_allowed": "0", "migrations": 3}], "migrations": 3, "mems_allowed": "0", "bytes_on_node": {"0": 430080}, "numa_accesses": {"available": false, "reason": "no hardware counters on this machine (perf_event_open(ls_dmnd_fills_from_sys.dram_io_near): ENOENT; PAPI: PAPI_set_opt(PAPI_INHERIT): Event does not exist)"}}, "build": {"compiler": "GNU 12.2.0", "cflags": "-O3 -march=native", "arch": "native (znver3)", "isa": ["sse3", "ssse3", "sse4.1", "sse4.2", "sse4a", "popcnt", "lahf_lm", "cmpxchg16b", "movbe", "lzcnt", "bmi", "bmi2", "adx", "aes", "pclmul", "sha", "f16c", "avx", "avx2", "fma", "gfni", "vaes", "vpclmulqdq", "avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx512ifma", "avx512vbmi", "avx512vbmi2", "avx512vnni", "avx512bitalg", "avx512vpopcntdq", "avx512bf16"]}, "launch": {"launcher": "local", "command": "/work/wt-warnings/.venv/lib/python3.11/site-packages/perfatlas/bin/pa-mem-latency bytes=65536 chain=page cpus=0 node=local page=4096 samples=3 min_sample_time=0.001 seed=1", "env": {}, "notes": []}}');
INSERT INTO results VALUES(2,2,'mem.bandwidth','{"bytes": 65536, "cpus": [0], "op": "copy", "threads": 1}',65536,1,'bandwidth_bytes_s','B/s','[1.0, 1.5, 0.5]',3,1.0,0.5,1.5,0.5,1.5,NULL,'["bandwidth_bytes_s: unstable: coefficient of variation 50.0% exceeds 5%; stop other load, pin threads, or raise samples= / --repeat", "bandwidth_bytes_s: only 3 samples: the interval is the full range with 75% coverage; use samples=6 or more for a 95 % CI", "binding not applied: thread 0 asked for cpu 0 but may run on 0-1; check cgroup/cpuset limits (Cpus_allowed_list)", "a sentence no kind ever began with"]','{"schema": "perfatlas.result/1", "benchmark": "mem.bandwidth", "params": {"bytes": 65536, "op": "copy", "threads": 1, "cpus": [0]}, "samples": {"bandwidth_bytes_s": [1.0, 1.5, 0.5], "time_s": [2.0, 2.0, 2.0]}, "units": {"bandwidth_bytes_s": "B/s", "time_s": "s"}, "placement": {"threads": [{"thread": 0, "cpu_requested": 0, "cpus_allowed": "0-1"}]}}');
INSERT INTO results VALUES(3,2,'mem.bandwidth','{"bytes": 65536, "cpus": [0], "op": "copy", "threads": 1}',65536,1,'time_s','s','[2.0, 2.0, 2.0]',3,2.0,2.0,2.0,2.0,2.0,NULL,'["time_s: only 3 samples: the interval is the full range with 75% coverage; use samples=6 or more for a 95 % CI", "binding not applied: thread 0 asked for cpu 0 but may run on 0-1; check cgroup/cpuset limits (Cpus_allowed_list)", "a sentence no kind ever began with"]','{"schema": "perfatlas.result/1", "benchmark": "mem.bandwidth", "params": {"bytes": 65536, "op": "copy", "threads": 1, "cpus": [0]}, "samples": {"bandwidth_bytes_s": [1.0, 1.5, 0.5], "time_s": [2.0, 2.0, 2.0]}, "units": {"bandwidth_bytes_s": "B/s", "time_s": "s"}, "placement": {"threads": [{"thread": 0, "cpu_requested": 0, "cpus_allowed": "0-1"}]}}');
CREATE TABLE profiles (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs(id),
    command  TEXT NOT NULL,     -- JSON list: the profiled command as the user gave it
    partial  INTEGER NOT NULL,  -- 1: built from rank files, the program did not finish
    document TEXT NOT NULL      -- perfatlas.ipm/1 JSON (docs/profile.md), or the partial view
);
CREATE TABLE scenarios (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs(id),
    kind     TEXT NOT NULL CHECK (kind IN ('scenario', 'matrix')),
    name     TEXT NOT NULL,
    document TEXT NOT NULL      -- JSON: definition and summary, or the interference matrix
);
INSERT INTO scenarios VALUES(1,2,'scenario','legacy','{"description": "two jobs", "path": null, "definition": "", "scale": 1.0, "cpus": [0, 1], "programs": [], "summary": {"cpus": 2, "cpu_list": "0,1", "jobs": 2, "bench_s": 1.0, "available_s": 2.0, "user_s": 2.2, "system_s": 0.0, "idle_s": 0.0, "waiting_s": 0.0, "completion_s": {"busy#1": 1.0, "sleepy#1": 1.0}, "mean_extension": 1.0, "max_extension": 1.0, "accounting_warnings": ["job sleepy#1: user + system + waiting = 0.200 s but wall x threads = 1.000 s x 2 = 2.000 s (more than 0.300 s apart): its threads slept or were not all busy; check the program and OMP_WAIT_POLICY"]}}');
CREATE TABLE scenario_jobs (
    id          INTEGER PRIMARY KEY,
    scenario_id INTEGER NOT NULL REFERENCES scenarios(id),
    job         TEXT NOT NULL,  -- name, '#copy' appended for the copies of a job
    threads     INTEGER NOT NULL,
    start_s     REAL NOT NULL,  -- offsets from the scenario's start
    end_s       REAL NOT NULL,
    wall_s      REAL NOT NULL,
    dedicated_s REAL,           -- the same program measured alone
    user_s      REAL NOT NULL,
    system_s    REAL NOT NULL,
    waiting_s   REAL NOT NULL,  -- runnable, not running (schedstat)
    migrations  INTEGER,
    document    TEXT NOT NULL   -- JSON: the job's timeline, accounting, program
);
INSERT INTO scenario_jobs VALUES(1,1,'busy#1',2,0.0,1.0,1.0,1.0,2.0,0.0,0.0,0,'{"job": "busy#1", "spec": "busy", "threads": 2, "nice": 0, "binding": "OS", "start_s": 0.0, "end_s": 1.0, "wall_s": 1.0, "dedicated_s": 1.0, "extension": 1.0, "user_s": 2.0, "system_s": 0.0, "waiting_s": 0.0, "running_s": 2.0, "migrations": 0, "threads_seen": 2, "accounting": {"expected_s": 2.0, "accounted_s": 2.0, "allowed_s": 0.30000000000000004, "ok": true, "warning": ""}, "timeline": [[0.5, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]], "invocations": 0}');
INSERT INTO scenario_jobs VALUES(2,1,'sleepy#1',2,0.0,1.0,1.0,1.0,0.2000000000000000111,0.0,0.0,0,'{"job": "sleepy#1", "spec": "sleepy", "threads": 2, "nice": 0, "binding": "OS", "start_s": 0.0, "end_s": 1.0, "wall_s": 1.0, "dedicated_s": 1.0, "extension": 1.0, "user_s": 0.2, "system_s": 0.0, "waiting_s": 0.0, "running_s": 0.2, "migrations": 0, "threads_seen": 2, "accounting": {"expected_s": 2.0, "accounted_s": 0.2, "allowed_s": 0.30000000000000004, "ok": false, "warning": "job sleepy#1: user + system + waiting = 0.200 s but wall x threads = 1.000 s x 2 = 2.000 s (more than 0.300 s apart): its threads slept or were not all busy; check the program and OMP_WAIT_POLICY"}, "timeline": [[0.5, 0.1, 0.0, 0.0], [1.0, 0.1, 0.0, 0.0]], "invocations": 0}');
CREATE INDEX results_run ON results (run_id, benchmark);
CREATE INDEX results_hot ON results (benchmark, metric, bytes, threads);
CREATE INDEX profiles_run ON profiles (run_id);
CREATE INDEX scenarios_run ON scenarios (run_id);
CREATE INDEX scenario_jobs_scenario ON scenario_jobs (scenario_id);
COMMIT;
