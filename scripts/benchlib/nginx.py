"""nginx as operators run it for static files — `worker_processes 2; sendfile on; tcp_nopush on;
tcp_nodelay on; open_file_cache max=1000 inactive=60s;` — serving a directory on loopback: the
peer the serving benchmarks compare Flipbook (and its HTTP server) with."""
import http.client
import os
import shutil
import signal
import subprocess
import time

from benchlib.ports import free_port

CONFIG = """worker_processes 2;
pid {work}/nginx-{name}.pid;
error_log {work}/nginx-{name}-error.log warn;
events {{ worker_connections 4096; }}
http {{
  types {{ }}
  default_type image/png;
  {access_log}
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  open_file_cache max=1000 inactive=60s;
  keepalive_timeout 65;
  keepalive_requests 100000000;
  client_body_temp_path {work}/tmp/body;
  proxy_temp_path {work}/tmp/proxy;
  fastcgi_temp_path {work}/tmp/fastcgi;
  uwsgi_temp_path {work}/tmp/uwsgi;
  scgi_temp_path {work}/tmp/scgi;
  server {{
    listen 127.0.0.1:{port} reuseport backlog=4096;
    root {root};
    location / {{ }}
  }}
}}
"""


def binary():
    """Debian's nginx (on PATH, or in /usr/sbin)."""
    return shutil.which("nginx") or "/usr/sbin/nginx"


def config(work, name, port, root, access_log=False):
    """The config text: files under `root` (every one served as image/png) on 127.0.0.1:`port`;
    its pid, error log and temporary files under `work`, named after `name`. `access_log`: nginx's
    default `access_log FILE combined;` (one write per request) or `access_log off;`."""
    line = f"access_log {work}/nginx-{name}-access.log combined;" if access_log else "access_log off;"
    return CONFIG.format(work=work, name=name, port=port, root=root, access_log=line)


class Nginx:
    """An nginx master and its workers in the foreground, serving `root` on `port` (default: a free
    one)."""

    def __init__(self, work, name, root, access_log=False, port=None):
        self.port = port or free_port()
        os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
        self.conf = os.path.join(work, f"nginx-{name}.conf")
        with open(self.conf, "w") as f:
            f.write(config(work, name, self.port, root, access_log))
        # When run as root nginx's workers are an unprivileged user: let them read the files.
        subprocess.run(["chmod", "-R", "a+rX", work])
        self.proc = subprocess.Popen([binary(), "-p", work, "-c", self.conf, "-g", "daemon off;"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.pid = self.proc.pid
        deadline = time.monotonic() + 10
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/")
                conn.getresponse().read()
                conn.close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"nginx did not answer on {self.port} (config {self.conf})")
                time.sleep(0.1)

    def stop(self):
        """A graceful stop (SIGQUIT), a kill after 10 s."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
