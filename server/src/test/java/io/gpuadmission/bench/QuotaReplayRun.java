package io.gpuadmission.bench;

import io.gpuadmission.allocator.Task;
import io.gpuadmission.quota.QuotaAdmission;
import io.gpuadmission.quota.QuotaBook;
import io.gpuadmission.quota.QuotaDecision;
import io.gpuadmission.quota.QuotaPod;
import io.gpuadmission.quota.QuotaTree;
import io.gpuadmission.quota.ReclaimPlanner;
import io.gpuadmission.quota.RunningPod;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;

/** One mode of the quota replay (see {@link QuotaReplay}), from the first arrival until nothing more can happen. */
final class QuotaReplayRun {
  /** How teams are held to their quotas. */
  enum Mode {
    NO_QUOTA("no-quota"),
    FIXED_MIN("fixed-min"),
    ELASTIC("elastic");

    final String label;

    Mode(String label) {
      this.label = label;
    }
  }

  /**
   * What one mode gives: the mean GPU allocation ratio from the arrival of the 10th percentile pod
   * to the last arrival (the trace's busy span: 90 % of its GPU pods come in its last fifth), the
   * mean while some pod waits, waits per team, max violations, reclaim evictions.
   */
  record Report(Mode mode, double allocationRatio, double whileWaiting, Map<String, TeamWaits> teams, int maxViolations, int evictions) {
    String describe() {
      var text = new StringBuilder(String.format(
          "mode=%s allocation_ratio=%.4f while_pods_wait=%.4f max_violations=%d reclaim_evictions=%d%n",
          mode.label, allocationRatio, whileWaiting, maxViolations, evictions));
      teams.forEach((team, waits) -> text.append("  ").append(team).append(' ').append(waits.describe()).append('\n'));
      return text.toString();
    }
  }

  /** A team's pods bound and never bound, and its waits in seconds: from pending under its min to bind, and from arrival to bind. */
  record TeamWaits(int bound, int neverBound, List<Long> underMin, List<Long> all) {
    long percentile(List<Long> waits, double p) {
      if (waits.isEmpty()) {
        return 0;
      }
      var sorted = waits.stream().sorted().toList();
      return sorted.get((int) Math.ceil(p * sorted.size()) - 1);
    }

    String describe() {
      return String.format("bound=%d never_bound=%d under_min_waits=%d p50=%ds p95=%ds max=%ds | all_waits p50=%ds p95=%ds",
          bound, neverBound, underMin.size(), percentile(underMin, 0.5), percentile(underMin, 0.95), percentile(underMin, 1.0),
          percentile(all, 0.5), percentile(all, 0.95));
    }
  }

  private record Event(long time, long seq, boolean arrival, String uid) {}

  private static final class Pending {
    final QuotaReplay.ReplayPod pod;
    final String uid;
    final long enqueued;
    long underMinSince = -1;

    Pending(QuotaReplay.ReplayPod pod, String uid, long enqueued) {
      this.pod = pod;
      this.uid = uid;
      this.enqueued = enqueued;
    }
  }

  private record Bound(Pending pending, ReplayCluster.Held held, QuotaPod quotaPod) {}

  /**
   * The asks that found no room in this pass (room only shrinks within a pass): a larger ask of the
   * same kind and GPU models finds none either, so it is not placed again.
   */
  private static final class NoRoom {
    private final Map<String, Long> smallest = new HashMap<>();

    boolean covers(Task task) {
      var failed = smallest.get(key(task));
      return failed != null && size(task) >= failed;
    }

    void add(Task task) {
      smallest.merge(key(task), size(task), Math::min);
    }

    private static String key(Task task) {
      return task.kind() + " " + new java.util.TreeSet<>(task.models()) + (task.isWhole() ? " " + task.perGpu() : "");
    }

    private static long size(Task task) {
      return task.isShare() ? task.perGpu() : task.gpus();
    }
  }

  private final Mode mode;
  private final ReplayCluster cluster;
  private final List<QuotaReplay.ReplayPod> pods;
  private final QuotaTree limits;
  private final QuotaTree elastic;
  private QuotaBook book;
  private final PriorityQueue<Event> events = new PriorityQueue<>((a, b) -> a.time != b.time ? Long.compare(a.time, b.time) : Long.compare(a.seq, b.seq));
  private final LinkedHashMap<String, Pending> pending = new LinkedHashMap<>();
  private final Map<String, Bound> running = new HashMap<>();
  private final Map<String, List<Long>> underMinWaits = new TreeMap<>();
  private final Map<String, List<Long>> allWaits = new TreeMap<>();
  private long seq;
  private int violations;
  private int evictions;

  QuotaReplayRun(Mode mode, List<TraceSimulator.TraceNode> nodes, List<QuotaReplay.ReplayPod> pods) {
    this.mode = mode;
    this.cluster = new ReplayCluster(nodes);
    this.pods = List.copyOf(pods);
    var gpus = cluster.capacity() / TraceSimulator.GPU;
    this.elastic = ReplayTeams.tree(gpus, false);
    this.limits = mode == Mode.FIXED_MIN ? ReplayTeams.tree(gpus, true) : elastic;
    this.book = QuotaBook.of(limits, List.of());
    for (var team : ReplayTeams.TEAMS) {
      underMinWaits.put(team.name(), new ArrayList<>());
      allWaits.put(team.name(), new ArrayList<>());
    }
  }

  Report run() {
    var byUid = new HashMap<String, QuotaReplay.ReplayPod>();
    for (var i = 0; i < pods.size(); i++) {
      var uid = "pod-" + i;
      byUid.put(uid, pods.get(i));
      events.add(new Event(pods.get(i).arrivalMillis(), seq++, true, uid));
    }
    var arrivals = pods.stream().mapToLong(QuotaReplay.ReplayPod::arrivalMillis).sorted().toArray();
    var from = arrivals.length == 0 ? 0 : arrivals[arrivals.length / 10];
    var horizon = arrivals.length == 0 ? 0 : arrivals[arrivals.length - 1];
    double area = 0;
    double waitingArea = 0;
    long waitingTime = 0;
    long last = 0;
    while (!events.isEmpty()) {
      var now = events.peek().time();
      var start = Math.max(last, from);
      var end = Math.min(now, horizon);
      if (end > start) {
        area += (double) cluster.allocated() * (end - start);
      }
      if (!pending.isEmpty()) {
        waitingArea += (double) cluster.allocated() * (now - last);
        waitingTime += now - last;
      }
      last = now;
      var arrived = new ArrayList<Pending>();
      var left = false;
      while (!events.isEmpty() && events.peek().time() == now) {
        var event = events.poll();
        if (event.arrival()) {
          var p = new Pending(byUid.get(event.uid()), event.uid(), now);
          pending.put(p.uid, p);
          arrived.add(p);
        } else {
          left |= leave(event.uid());
        }
      }
      schedule(now, left ? List.copyOf(pending.values()) : arrived);
    }
    var teams = new TreeMap<String, TeamWaits>();
    for (var team : ReplayTeams.TEAMS) {
      var never = (int) pending.values().stream().filter(p -> p.pod.team().equals(team.name())).count();
      var under = underMinWaits.get(team.name());
      teams.put(team.name(), new TeamWaits(allWaits.get(team.name()).size(), never, under, allWaits.get(team.name())));
    }
    var ratio = horizon <= from ? 0 : area / ((double) cluster.capacity() * (horizon - from));
    var whileWaiting = waitingTime == 0 ? 0 : waitingArea / ((double) cluster.capacity() * waitingTime);
    return new Report(mode, ratio, whileWaiting, teams, violations, evictions);
  }

  /** Tries the pods in arrival order; a shape that fits nowhere is not tried again in the same pass. */
  private void schedule(long now, List<Pending> candidates) {
    var noRoom = new NoRoom();
    var noReclaim = new HashSet<String>();
    for (var p : candidates) {
      if (pending.containsKey(p.uid)) {
        attempt(p, now, noRoom, noReclaim);
      }
    }
  }

  private void attempt(Pending p, long now, NoRoom noRoom, Set<String> noReclaim) {
    var leaf = limits.leafOf(p.pod.team()).orElseThrow();
    var underMin = book.used(leaf).add(p.pod.ask()).fitsWithin(leaf.min());
    if (underMin && p.underMinSince < 0) {
      p.underMinSince = now;
    }
    var reclaimDue = false;
    if (mode != Mode.NO_QUOTA) {
      var decision = QuotaAdmission.admit(book, p.pod.team(), p.pod.ask());
      if (decision instanceof QuotaDecision.Refused refused) {
        if (!(mode == Mode.ELASTIC && refused.leafUnderMin())) {
          return;
        }
        reclaimDue = true;
      }
    }
    if (!reclaimDue && !noRoom.covers(p.pod.task())) {
      var placement = cluster.place(p.pod.task());
      if (placement.isPresent()) {
        bind(p, placement.get().node(), placement.get().gpus(), now);
        return;
      }
      noRoom.add(p.pod.task());
    }
    var key = p.pod.team() + " " + p.pod.task();
    if (mode == Mode.ELASTIC && underMin && !noReclaim.contains(key) && !reclaim(p, now)) {
      noReclaim.add(key);
    }
  }

  private boolean reclaim(Pending p, long now) {
    var runningPods = new ArrayList<RunningPod>(running.size());
    var heldByUid = new HashMap<String, ReplayCluster.Held>();
    var candidates = new java.util.TreeSet<String>();
    for (var bound : running.values()) {
      var node = cluster.name(bound.held().node());
      runningPods.add(new RunningPod(bound.quotaPod(), node));
      heldByUid.put(bound.pending().uid, bound.held());
      if (!bound.pending().pod.team().equals(p.pod.team())) {
        candidates.add(node);
      }
    }
    runningPods.sort(java.util.Comparator.comparing(pod -> pod.pod().uid()));
    var pendingPod = QuotaPod.of(p.uid, p.pod.team(), p.pod.ask(), p.pod.priority(), now);
    var plan = ReclaimPlanner.plan(book, pendingPod, List.copyOf(candidates), runningPods,
        (node, uids) -> cluster.placeOn(node, p.pod.task(), uids.stream().map(heldByUid::get).toList()).isPresent());
    if (plan.isEmpty() || plan.get().victims().isEmpty()) {
      return false;
    }
    for (var victim : plan.get().victims()) {
      var bound = running.remove(victim.pod().uid());
      cluster.give(bound.held());
      book = book.minus(bound.quotaPod());
      evictions++;
      var again = new Pending(bound.pending().pod, bound.pending().uid + "'", now);
      pending.put(again.uid, again);
    }
    var node = cluster.index(plan.get().node());
    var gpus = cluster.placeOn(plan.get().node(), p.pod.task(), List.of());
    if (gpus.isEmpty() || !(QuotaAdmission.admit(book, p.pod.team(), p.pod.ask()) instanceof QuotaDecision.Admitted)) {
      throw new IllegalStateException("reclaim for " + p.uid + " on " + plan.get().node() + " left no room");
    }
    bind(p, node, gpus.get(), now);
    return true;
  }

  private void bind(Pending p, int node, int[] gpus, long now) {
    var held = cluster.take(p.pod.task(), node, gpus);
    var quotaPod = new QuotaPod(p.uid, p.pod.team(), p.pod.ask(), p.pod.priority(), now, Optional.empty());
    book = book.plus(quotaPod);
    pending.remove(p.uid);
    running.put(p.uid, new Bound(p, held, quotaPod));
    events.add(new Event(now + p.pod.durationMillis(), seq++, false, p.uid));
    allWaits.get(p.pod.team()).add((now - p.enqueued) / 1000);
    if (p.underMinSince >= 0) {
      underMinWaits.get(p.pod.team()).add((now - p.underMinSince) / 1000);
    }
    for (var quota : limits.leafOf(p.pod.team()).orElseThrow().pathToRoot()) {
      if (!book.used(quota).withinLimits(elastic.node(quota.name()).orElseThrow().max())) {
        violations++;
      }
    }
  }

  /** Whether the pod was still running (a reclaimed pod's old departure is void). */
  private boolean leave(String uid) {
    var bound = running.remove(uid);
    if (bound == null) {
      return false;
    }
    cluster.give(bound.held());
    book = book.minus(bound.quotaPod());
    return true;
  }
}
