// A real nginx for the TLS / HTTP/2 fetch tests: a throw-away certificate
// authority and a server certificate for one DNS name are made with the
// `openssl` CLI, then nginx (Debian's nginx-light has http_v2) runs as the
// current user in the foreground (no master process, so no user switch)
// with its own prefix, config and logs in a temp dir, serving files from
// <dir>/html over HTTPS + HTTP/2 on 127.0.0.1:<free port>. The destructor
// stops it (SIGQUIT, then SIGKILL) and removes the dir.
// Start() returns "" on success or a message saying what is missing; the
// tests FAIL with it (CI must install nginx-light and openssl).
// Thread-safety: use from one thread.

#ifndef FRESHD_TESTS_FETCH_NGINX_SERVER_H_
#define FRESHD_TESTS_FETCH_NGINX_SERVER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace freshd::fetch::testing {

class NginxServer {
 public:
  // `server_name`: the DNS name the certificate is issued for.
  explicit NginxServer(std::string server_name)
      : name_(std::move(server_name)) {}
  ~NginxServer() { Stop(); }
  NginxServer(const NginxServer&) = delete;
  NginxServer& operator=(const NginxServer&) = delete;

  std::string Start() {
    std::string nginx = FindNginx();
    if (nginx.empty()) {
      return "nginx not found (install Debian's nginx-light: "
             "scripts/install-deps.sh)";
    }
    if (std::system("openssl version > /dev/null 2>&1") != 0) {
      return "the openssl CLI is not installed";
    }
    char tmpl[] = "/tmp/freshd-nginx-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return "mkdtemp failed";
    dir_ = tmpl;
    std::filesystem::create_directories(dir_ + "/html");
    std::filesystem::create_directories(dir_ + "/logs");
    std::string err = MakeCertificates();
    if (!err.empty()) return err;
    port_ = FreePort();
    if (port_ == 0) return "no free port";
    WriteFile(dir_ + "/nginx.conf", Config());
    pid_ = fork();
    if (pid_ < 0) return "fork failed";
    if (pid_ == 0) {
      std::string log = dir_ + "/logs/stderr.log";
      FILE* f = std::freopen(log.c_str(), "w", stderr);
      (void)f;
      execl(nginx.c_str(), nginx.c_str(), "-p", dir_.c_str(), "-c",
            (dir_ + "/nginx.conf").c_str(), "-e", log.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return "nginx exited at start: " + ReadFile(dir_ + "/logs/stderr.log");
      }
      if (Listening()) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "nginx did not listen within 10 s: " +
           ReadFile(dir_ + "/logs/stderr.log");
  }

  void Stop() {
    if (pid_ > 0) {
      kill(pid_, SIGQUIT);
      int status = 0;
      for (int i = 0; i < 200; ++i) {
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        pid_ = -1;
      }
    }
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
      dir_.clear();
    }
  }

  // Serves `body` at /<name> (Content-Type by extension: .html text/html).
  void AddFile(const std::string& name, const std::string& body) {
    WriteFile(dir_ + "/html/" + name, body);
  }

  int port() const { return port_; }
  std::string ca_file() const { return dir_ + "/ca.pem"; }
  std::string Url(const std::string& path) const {
    return "https://" + name_ + ":" + std::to_string(port_) + path;
  }
  // Lines nginx logged per request ("<protocol> <connection> <uri>").
  std::string AccessLog() const { return ReadFile(dir_ + "/logs/access.log"); }

 private:
  static std::string FindNginx() {
    for (const char* p : {"/usr/sbin/nginx", "/usr/local/sbin/nginx",
                          "/usr/bin/nginx", "/usr/local/bin/nginx"}) {
      if (access(p, X_OK) == 0) return p;
    }
    return "";
  }

  static void WriteFile(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary) << data;
  }
  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string MakeCertificates() {
    WriteFile(dir_ + "/server.ext",
              "basicConstraints=critical,CA:FALSE\n"
              "keyUsage=critical,digitalSignature\n"
              "extendedKeyUsage=serverAuth\n"
              "subjectAltName=DNS:" +
                  name_ + "\n");
    const std::string d = dir_ + "/";
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1";
    std::string cmd =
        "(cd " + d + " && openssl req -x509 -nodes -days 2" + ec +
        " -keyout ca.key -out ca.pem -subj /CN=freshd-test-ca"
        " -addext basicConstraints=critical,CA:TRUE"
        " -addext keyUsage=critical,keyCertSign,cRLSign"
        " && openssl req -nodes" +
        ec + " -keyout server.key -out server.csr -subj /CN=" + name_ +
        " && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key"
        " -CAcreateserial -days 2 -extfile server.ext -out server.pem) > " +
        d + "openssl.log 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      return "openssl failed: " + ReadFile(d + "openssl.log");
    }
    return "";
  }

  std::string Config() const {
    std::string p = std::to_string(port_);
    return "daemon off;\nmaster_process off;\nworker_processes 1;\n"
           "pid " +
           dir_ + "/nginx.pid;\nerror_log " + dir_ +
           "/logs/error.log warn;\n"
           "events { worker_connections 64; }\n"
           "http {\n"
           "  types { text/html html; text/plain txt; }\n"
           "  default_type application/octet-stream;\n"
           "  log_format t '$server_protocol $connection $uri';\n"
           "  access_log " +
           dir_ +
           "/logs/access.log t;\n"
           "  client_body_temp_path " +
           dir_ + "/tmp_body;\n  proxy_temp_path " + dir_ +
           "/tmp_proxy;\n  fastcgi_temp_path " + dir_ +
           "/tmp_fcgi;\n  uwsgi_temp_path " + dir_ +
           "/tmp_uwsgi;\n  scgi_temp_path " + dir_ +
           "/tmp_scgi;\n"
           "  keepalive_requests 1000;\n"
           "  server {\n"
           "    listen 127.0.0.1:" +
           p +
           " ssl http2;\n"
           "    server_name " +
           name_ +
           ";\n"
           "    ssl_certificate " +
           dir_ + "/server.pem;\n    ssl_certificate_key " + dir_ +
           "/server.key;\n"
           "    root " +
           dir_ +
           "/html;\n"
           "  }\n"
           "}\n";
  }

  static int FreePort() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    int port = 0;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port = ntohs(a.sin_port);
    }
    close(fd);
    return port;
  }

  bool Listening() const {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port_));
    bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    close(fd);
    return ok;
  }

  const std::string name_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace freshd::fetch::testing

#endif  // FRESHD_TESTS_FETCH_NGINX_SERVER_H_
