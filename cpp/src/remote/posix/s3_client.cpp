// The S3 client through libcurl, loaded with dlopen when the first request is made (see
// s3_client.hpp): only libcurl's header is used at build time.
#include "remote/s3_client.hpp"

#include "remote/s3_location.hpp"
#include "text/utf8_text.hpp"

#include <algorithm>
#include <cmath>
#include <curl/curl.h>
#include <dlfcn.h>
#include <exception>
#include <memory>
#include <mutex>

namespace tensoracle::detail {

namespace {

// The first libcurl version with CURLOPT_AWS_SIGV4.
constexpr unsigned kMinimumCurlVersion = 0x074B00; // 7.75.0
// What of an error answer's body a message quotes.
constexpr std::size_t kErrorBodyBytes = 400;

// The functions of libcurl this client calls, found in the library loaded at run time.
struct Curl {
    decltype(&curl_global_init) global_init = nullptr;
    decltype(&curl_version_info) version_info = nullptr;
    decltype(&curl_easy_init) easy_init = nullptr;
    decltype(&curl_easy_setopt) easy_setopt = nullptr;
    decltype(&curl_easy_perform) easy_perform = nullptr;
    decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
    decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
    decltype(&curl_easy_strerror) easy_strerror = nullptr;
    decltype(&curl_slist_append) slist_append = nullptr;
    decltype(&curl_slist_free_all) slist_free_all = nullptr;
};

template <typename Function>
void find(void* library, char const* name, Function& function) {
    void* const symbol = dlsym(library, name);
    if (symbol == nullptr) {
        throw RemoteUnavailable(std::string("the libcurl found has no ") + name);
    }
    function = reinterpret_cast<Function>(symbol); // NOLINT: dlsym's result is the function
}

Curl load_curl() {
    void* library = nullptr;
    std::string tried;
    for (char const* name : {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"}) {
        library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (library != nullptr) {
            break;
        }
        char const* why = dlerror();
        tried += std::string(tried.empty() ? "" : "; ") + (why == nullptr ? name : why);
    }
    if (library == nullptr) {
        throw RemoteUnavailable("pulling from S3 needs libcurl, which cannot be loaded (" + tried +
                                "): install it (Debian and Ubuntu: apt-get install libcurl4)");
    }
    Curl curl;
    find(library, "curl_global_init", curl.global_init);
    find(library, "curl_version_info", curl.version_info);
    find(library, "curl_easy_init", curl.easy_init);
    find(library, "curl_easy_setopt", curl.easy_setopt);
    find(library, "curl_easy_perform", curl.easy_perform);
    find(library, "curl_easy_getinfo", curl.easy_getinfo);
    find(library, "curl_easy_cleanup", curl.easy_cleanup);
    find(library, "curl_easy_strerror", curl.easy_strerror);
    find(library, "curl_slist_append", curl.slist_append);
    find(library, "curl_slist_free_all", curl.slist_free_all);
    curl_version_info_data const* version = curl.version_info(CURLVERSION_NOW);
    if (version == nullptr || version->version_num < kMinimumCurlVersion) {
        throw RemoteUnavailable(
            std::string("pulling from S3 needs libcurl 7.75.0 or later (for AWS signatures); "
                        "the one loaded is ") +
            (version == nullptr ? "of an unknown version" : version->version));
    }
    if (CURLcode const code = curl.global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
        throw RemoteUnavailable(std::string("libcurl cannot start: ") + curl.easy_strerror(code));
    }
    return curl; // the library stays loaded for the life of the process
}

Curl const& curl_library() {
    static std::once_flag once;
    static Curl curl;
    static std::exception_ptr failure;
    std::call_once(once, [] {
        try {
            curl = load_curl();
        } catch (...) {
            failure = std::current_exception();
        }
    });
    if (failure) {
        std::rethrow_exception(failure);
    }
    return curl;
}

// One GET in progress: what the callbacks share.
struct Transfer {
    Transfer(Curl const& library, CURL* request, ObjectSink& destination, std::string const& name)
        : curl(&library), handle(request), sink(&destination), shown(&name) {}
    Curl const* curl;
    CURL* handle;
    ObjectSink* sink;
    std::string const* shown;
    bool started = false;
    long status = 0;
    std::string error_body;     // of an answer other than 200, for the message
    std::exception_ptr failure; // thrown by the sink, or by judging the answer
    std::uint64_t announced = 0;

    // Called before the first byte of the body, once the answer's headers are in.
    void begin() {
        started = true;
        curl->easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
        if (status != 200) {
            return;
        }
        curl_off_t length = -1;
        curl->easy_getinfo(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
        if (length < 0) {
            throw RemoteUnavailable("GET " + *shown +
                                    " failed: the answer announces no Content-Length");
        }
        announced = static_cast<std::uint64_t>(length);
        sink->start(announced);
    }
};

extern "C" std::size_t write_body(char* data, std::size_t size, std::size_t count,
                                  void* user) noexcept {
    auto* transfer = static_cast<Transfer*>(user);
    std::size_t const bytes = size * count;
    try {
        if (!transfer->started) {
            transfer->begin();
        }
        if (transfer->status != 200) {
            std::size_t const room =
                kErrorBodyBytes - std::min(kErrorBodyBytes, transfer->error_body.size());
            transfer->error_body.append(data, std::min(room, bytes));
            return bytes;
        }
        transfer->sink->feed(std::as_bytes(std::span(data, bytes)));
        return bytes;
    } catch (...) {
        transfer->failure = std::current_exception();
        return 0; // CURLE_WRITE_ERROR: the transfer stops here
    }
}

// Frees the handle and the header list however the request ends.
struct Request {
    Request(Curl const& library, CURL* request) : curl(library), handle(request) {}
    Curl const& curl;
    CURL* handle;
    curl_slist* headers = nullptr;
    Request(Request const&) = delete;
    Request& operator=(Request const&) = delete;
    Request(Request&&) = delete;
    Request& operator=(Request&&) = delete;
    ~Request() {
        curl.slist_free_all(headers);
        curl.easy_cleanup(handle);
    }
    void add_header(std::string const& header) {
        curl_slist* const added = curl.slist_append(headers, header.c_str());
        if (added == nullptr) {
            throw std::bad_alloc();
        }
        headers = added;
    }
    void set(CURLoption option, auto value) const {
        if (CURLcode const code = curl.easy_setopt(handle, option, value); code != CURLE_OK) {
            throw RemoteUnavailable(std::string("libcurl refused an option: ") +
                                    curl.easy_strerror(code));
        }
    }
};

} // namespace

bool S3Client::get(std::string_view bucket, std::string_view key, std::string const& shown,
                   ObjectSink& sink) const {
    Curl const& curl = curl_library();
    CURL* const handle = curl.easy_init();
    if (handle == nullptr) {
        throw RemoteUnavailable("GET " + shown + " failed: libcurl cannot make a request");
    }
    Request request(curl, handle);
    std::string const url = request_url(settings_.endpoint, settings_.region, bucket, key);
    request.set(CURLOPT_URL, url.c_str());
    request.set(CURLOPT_NOSIGNAL, 1L);
    request.set(CURLOPT_FOLLOWLOCATION, 0L);
    request.set(CURLOPT_CONNECTTIMEOUT_MS,
                static_cast<long>(std::max(1.0, settings_.connect_seconds * 1000)));
    // A transfer of many gigabytes may take long: what is bounded is the wait for a byte.
    request.set(CURLOPT_LOW_SPEED_LIMIT, 1L);
    request.set(CURLOPT_LOW_SPEED_TIME,
                static_cast<long>(std::max(1.0, std::ceil(settings_.timeout_seconds))));
    std::string const signing = "aws:amz:" + settings_.region + ":s3";
    if (settings_.credentials) {
        request.set(CURLOPT_AWS_SIGV4, signing.c_str());
        request.set(CURLOPT_USERNAME, settings_.credentials->access_key_id.c_str());
        request.set(CURLOPT_PASSWORD, settings_.credentials->secret_access_key.c_str());
        // S3 wants the payload's hash in a header of its own; a GET has none to sign.
        request.add_header("x-amz-content-sha256: UNSIGNED-PAYLOAD");
        if (!settings_.credentials->session_token.empty()) {
            request.add_header("x-amz-security-token: " + settings_.credentials->session_token);
        }
    }
    request.set(CURLOPT_HTTPHEADER, request.headers);
    Transfer transfer(curl, handle, sink, shown);
    request.set(CURLOPT_WRITEFUNCTION, &write_body);
    request.set(CURLOPT_WRITEDATA, static_cast<void*>(&transfer));
    CURLcode const code = curl.easy_perform(handle);
    if (transfer.failure) {
        std::rethrow_exception(transfer.failure);
    }
    if (code != CURLE_OK) {
        throw RemoteUnavailable("GET " + shown + " failed: " + curl.easy_strerror(code) + " (" +
                                url + ")");
    }
    if (!transfer.started) { // an answer without a body
        transfer.begin();
    }
    if (transfer.status == 404) {
        return false;
    }
    if (transfer.status != 200) {
        std::string const body = escape_for_terminal(transfer.error_body);
        std::string hint;
        if ((transfer.status == 401 || transfer.status == 403) && !settings_.credentials) {
            hint = " (the request was sent unsigned: no credentials were found in "
                   "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, nor in the shared credentials "
                   "file's profile, the only sources this native pull reads; export them, or "
                   "pull with the Python package, which follows the AWS SDK's whole chain "
                   "(instance profiles, IAM Identity Center, web identity): python -m "
                   "tensoracle.cli cache pull --manifest ...)";
        }
        throw RemoteUnavailable("GET " + shown + " answered " + std::to_string(transfer.status) +
                                (body.empty() ? std::string() : ": " + body) + hint);
    }
    return true;
}

} // namespace tensoracle::detail
