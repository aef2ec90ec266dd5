# mcpgate in a container: `docker build -t mcpgate .`, then
# `docker run -p 8080:8080 mcpgate --upstream http://HOST:PORT/mcp`
# (arguments after the image name go to `mcpgate serve`).

FROM rust:1.95-bookworm AS build
WORKDIR /src
# The whole tree: Cargo checks every target Cargo.toml names (tests,
# benches, the example) even when it builds only the binary.
COPY . .
RUN cargo build --release --locked

# Debian slim rather than distroless: the same glibc as the builder, and
# bash for the health check (the image has no curl).
FROM debian:bookworm-slim
# The binary verifies HTTPS upstreams and JWKS URLs against Mozilla's
# roots built into it; the system bundle is copied (not installed: no
# package manager run here) for an `upstream_ca_file` to point at.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /src/target/release/mcpgate /usr/local/bin/mcpgate
# A numeric user, so that Kubernetes' runAsNonRoot can check it; mcpgate
# writes nothing to disk and needs no home or passwd entry.
USER 10001:10001
# Loopback is mcpgate's default, unreachable from outside a container.
# The variable wins over a config file's `listen` (flags win over it).
ENV MCPGATE_LISTEN=0.0.0.0:8080
EXPOSE 8080
# GET /healthz over bash's /dev/tcp, on the port MCPGATE_LISTEN names
# (plaintext only: with tls_cert/tls_key set, override or drop this).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${MCPGATE_LISTEN##*:} && printf 'GET /healthz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && read -r -t 2 status <&3 && [[ $status == 'HTTP/1.1 200 '* ]]"]
# SIGTERM: stop accepting, finish what is in flight (shutdown_grace_ms,
# 10 s by default; give `docker stop -t` more than that), exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["mcpgate", "serve"]
