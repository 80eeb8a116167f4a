# The secured side of the test broker (sourced by scripts/servers/kafka.sh, never run): its own CA
# and certificates, made once with openssl and keytool under $SECURED (a directory only root can
# read), the SCRAM user and its password, and the file that tells tests where all of it is.
#
#   $SECURED/ca.pem                 the CA every certificate below is signed by (clients trust it)
#   $SECURED/broker.p12             the broker's key and certificate (SAN IP:127.0.0.1 only, so a
#                                   client that dials "localhost" meets a hostname mismatch)
#   $SECURED/expired.p12            the same names, on a certificate that expired a year ago
#   $SECURED/truststore.p12         the CA, for the broker to check client certificates (mTLS)
#   $SECURED/client.pem|.key        a client certificate (CN=jetconnect-client) and its key, PEM
#   $SECURED/client-encrypted.key   the same key encrypted (PKCS#8, AES-256) with key_password
#   $SECURED/client.p12             the client's key and certificate as a PKCS12 keystore
#   $SECURED/client-truststore.p12|.jks   the CA as a Java client's truststore (Spark's options)
#   $SECURED/other-ca.pem           a CA nobody trusts, and stranger.pem|.key, a client certificate
#                                   it signed: the "untrusted" cases
#   $SECURED/secured.json           endpoints, user, passwords and the paths above, for the tests
#
# Every password holds ' " @ and %, as real ones do: quoting bugs show.

SECURED=$BASE/secured
SASL_SSL_PORT=9094
MTLS_PORT=9095
EXPIRED_PORT=9096
SCRAM_USER=alice
# Bumped when the material changes shape: a directory made by an older script is made anew.
SECURED_LAYOUT=2

secured_value() {  # secured_value KEY: one string of secured.json
    "$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]], end="")' "$SECURED/secured.json" "$1"
}

_new_password() {  # _new_password PREFIX: PREFIX, the awkward characters, and 12 random hex digits
    printf "%s'q\"@%%-%s" "$1" "$(openssl rand -hex 6)"
}

_make_secured() {  # the whole directory, made in $SECURED.tmp and moved into place when complete;
    # the CA and certificates by _server.sh's make_* functions, as every secured server's
    local tmp=$SECURED.tmp store_pass key_pass p12_pass password
    rm -rf "$tmp"
    mkdir -p "$tmp"
    chmod 700 "$tmp"
    (
        cd "$tmp"
        umask 077
        store_pass=$(_new_password store)
        key_pass=$(_new_password key)
        p12_pass=$(_new_password p12)
        password=$(_new_password scram)
        make_ca "$tmp" "jetconnect test ca"
        make_server_cert "$tmp" broker "IP:127.0.0.1"
        make_expired_server_cert "$tmp" expired "IP:127.0.0.1"
        make_client_cert "$tmp" client jetconnect-client
        make_ca "$tmp/other" "jetconnect test other-ca"  # a CA nobody trusts, and a client it signed
        make_client_cert "$tmp/other" stranger stranger
        cp other/ca.pem other-ca.pem && cp other/stranger.pem other/stranger.key . && rm -rf other
        make_pkcs12 "$tmp" broker "$store_pass"
        make_pkcs12 "$tmp" expired "$store_pass"
        make_pkcs12 "$tmp" client "$p12_pass"
        make_truststore "$tmp" "$store_pass"  # ca.p12: the CA as Java keeps it
        mv ca.p12 truststore.p12 && cp truststore.p12 client-truststore.p12
        STORE_PASS=$store_pass keytool -importcert -noprompt -alias ca -file ca.pem -keystore client-truststore.jks \
            -storetype JKS -storepass:env STORE_PASS >/dev/null 2>&1
        KEY_PASS=$key_pass openssl pkcs8 -topk8 -v2 aes-256-cbc -in client.key -out client-encrypted.key -passout env:KEY_PASS
        rm -f ca.key broker.key expired.key
        STORE_PASS=$store_pass KEY_PASS=$key_pass P12_PASS=$p12_pass PASSWORD=$password "$PYTHON" - "$tmp" "$SECURED" <<'PY'
import json, os, sys
tmp, final = sys.argv[1], sys.argv[2]
info = {
    "layout": int(os.environ["SECURED_LAYOUT"]),
    "sasl_ssl": f"127.0.0.1:{os.environ['SASL_SSL_PORT']}",
    "mtls": f"127.0.0.1:{os.environ['MTLS_PORT']}",
    "expired": f"127.0.0.1:{os.environ['EXPIRED_PORT']}",
    "plaintext": "127.0.0.1:9092",
    "mechanism": "SCRAM-SHA-512",
    "user": os.environ["SCRAM_USER"],
    "password": os.environ["PASSWORD"],
    "store_password": os.environ["STORE_PASS"],
    "key_password": os.environ["KEY_PASS"],
    "p12_password": os.environ["P12_PASS"],
}
for name in ("ca.pem", "other-ca.pem", "client.pem", "client.key", "client-encrypted.key", "client.p12",
             "client-truststore.p12", "client-truststore.jks", "stranger.pem", "stranger.key"):
    info[name] = os.path.join(final, name)
with open(os.path.join(tmp, "secured.json"), "w") as out:
    json.dump(info, out, indent=2)
PY
    ) || return 1
    for needed in ca.pem broker.p12 expired.p12 truststore.p12 client.pem client.key client-encrypted.key client.p12 \
        client-truststore.p12 client-truststore.jks stranger.pem stranger.key secured.json; do
        [ -s "$tmp/$needed" ] || { echo "$SERVER_SCRIPT: could not make $needed" >&2; return 1; }
    done
    rm -rf "$SECURED"
    mv "$tmp" "$SECURED"
}

make_secured() {  # the CA, certificates and secured.json, once (again when the layout changed)
    command -v openssl >/dev/null || apt_install openssl
    command -v keytool >/dev/null || apt_install openjdk-17-jre-headless
    if [[ -f $SECURED/secured.json ]] && [[ "$(secured_value layout 2>/dev/null)" == "$SECURED_LAYOUT" ]]; then
        return 0
    fi
    echo "$SERVER_SCRIPT: making the test CA, certificates and SCRAM password under $SECURED"
    export SECURED_LAYOUT SASL_SSL_PORT MTLS_PORT EXPIRED_PORT SCRAM_USER
    _make_secured || die "could not make the TLS material under $SECURED"
}

# The secured listeners' settings, appended to server.properties. The PLAINTEXT listener stays
# the inter-broker one, so nothing else about the node changes. SASL_SSL takes SCRAM-SHA-512
# logins over TLS; MTLS (protocol SSL) requires a client certificate signed by the CA; EXPIRED
# presents a certificate that expired a year ago. Every listener but CONTROLLER is advertised: a
# client learns the broker's address for the listener it dialled.
secured_properties() {
    local pass
    pass=$(secured_value store_password)
    cat <<PROPS
listeners=PLAINTEXT://$HOST:$PORT,CONTROLLER://$HOST:$CONTROLLER_PORT,SASL_SSL://$HOST:$SASL_SSL_PORT,MTLS://$HOST:$MTLS_PORT,EXPIRED://$HOST:$EXPIRED_PORT
advertised.listeners=PLAINTEXT://$HOST:$PORT,SASL_SSL://$HOST:$SASL_SSL_PORT,MTLS://$HOST:$MTLS_PORT,EXPIRED://$HOST:$EXPIRED_PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,MTLS:SSL,EXPIRED:SSL
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PKCS12
ssl.keystore.location=$SECURED/broker.p12
ssl.keystore.password=$(_properties_escape "$pass")
ssl.truststore.type=PKCS12
ssl.truststore.location=$SECURED/truststore.p12
ssl.truststore.password=$(_properties_escape "$pass")
listener.name.mtls.ssl.client.auth=required
listener.name.expired.ssl.keystore.type=PKCS12
listener.name.expired.ssl.keystore.location=$SECURED/expired.p12
listener.name.expired.ssl.keystore.password=$(_properties_escape "$pass")
PROPS
}

_properties_escape() {  # a value for java.util.Properties: backslashes doubled (the rest is literal)
    printf '%s' "${1//\\/\\\\}"
}

# SCRAM users, for `StorageTool format --add-scram` (a fresh data directory).
scram_format_args() {
    printf '%s\n' --add-scram "SCRAM-SHA-512=[name=$SCRAM_USER,password=$(secured_value password)]"
}

# The SCRAM user on a running broker, through the PLAINTEXT listener's admin API: storage formatted
# by an older script has no SCRAM users, and a remade secured directory has a new password. An
# upsert of the same user is harmless, so every start makes sure.
upsert_scram_user() {
    "$PYTHON" - "$HOST:$PORT" "$SCRAM_USER" "$SECURED/secured.json" <<'PY'
import json, sys
from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion
bootstrap, user, path = sys.argv[1:]
password = json.load(open(path))["password"]
admin = AdminClient({"bootstrap.servers": bootstrap})
info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096)
for future in admin.alter_user_scram_credentials([UserScramCredentialUpsertion(user, info, password.encode())]).values():
    future.result(timeout=30)
PY
}

# True when the TLS listeners listen: read from /proc/net/tcp (state 0A, LISTEN), not by connecting,
# which the broker would log as a failed TLS handshake, the very lines the tests count.
secured_listening() {
    "$PYTHON" - "$SASL_SSL_PORT" "$MTLS_PORT" "$EXPIRED_PORT" <<'PY' >/dev/null 2>&1
import sys
listening = set()
# 127.0.0.1, and as the JVM's dual-stack sockets show it, ::ffff:127.0.0.1
loopback = ("0100007F", "0000000000000000FFFF00000100007F")
for name in ("/proc/net/tcp", "/proc/net/tcp6"):
    with open(name) as table:
        for line in list(table)[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, port = local.partition(":")
            if state == "0A" and address in loopback:  # LISTEN
                listening.add(int(port, 16))
sys.exit(0 if all(int(port) in listening for port in sys.argv[1:]) else 1)
PY
}
