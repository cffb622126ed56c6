;;; eglot_completion.el --- eglot client test for lsp-coder -*- lexical-binding: t -*-

;; Run with
;;   LSP_CODER_TEST_PARAMS=params.json emacs --batch -l eglot_completion.el
;;
;; params.json: {cmd, init_options, file, line, character, load_timeout_s,
;;               request_timeout_s, out, user_config, beside, rass, retry_s}
;; With `user_config' (a path to editors/emacs/lsp-coder.el) the server entry comes from
;; that file, set up for the menu (`lsp-coder-ghost-text' nil: no ghost text); otherwise the script puts its own entry in `eglot-server-programs'.  With
;; `beside' (a second server's command) and `rass' (rassumfrassum's program) as well, the
;; entry is that file's `lsp-coder-eglot-beside': both servers through rass; the script then
;; asks until the answer holds items of both servers (alone, until it holds lsp-coder's:
;; see `lsp-coder-test--complete'), and also writes the candidates
;; eglot's `completion-at-point' offers, in eglot's display order, as `capf'.
;; Connects eglot to the server for a python-mode buffer visiting `file', waits for the model
;; (`lspCoder.stats'), asks for textDocument/completion and writes
;; {eglot_version, capabilities, stats, result, messages} (or {error, messages}) as JSON
;; to `out'; messages are the server's window/logMessage and window/showMessage texts.

;;; Code:

(load (expand-file-name "load_eglot.el" (file-name-directory load-file-name)) nil t)
(load (expand-file-name "test_io.el" (file-name-directory load-file-name)) nil t)
(require 'seq)

(defun lsp-coder-test--eglot-version ()
  "The version of the eglot that was loaded, as a string."
  (let ((dir (file-name-directory (locate-library "eglot"))))
    (file-name-nondirectory (directory-file-name dir))))

(defun lsp-coder-test--wait-for-model (server)
  "Poll lspCoder.stats on SERVER until the model is loaded; return the stats."
  (let ((deadline (+ (float-time) (lsp-coder-test--param :load_timeout_s)))
        stats)
    (while (progn
             (setq stats (jsonrpc-request server :workspace/executeCommand
                                          '(:command "lspCoder.stats" :arguments [])))
             (let ((totals (plist-get stats :totals)))
               (when (plist-get totals :error)
                 (error "The model failed to load: %s" (plist-get totals :error)))
               (not (eq (plist-get totals :model_loaded) t))))
      (when (> (float-time) deadline)
        (error "The model did not load: %S" stats))
      (accept-process-output nil 0.2))
    stats))

(defun lsp-coder-test--run ()
  "Connect, wait for the model, request a completion; return the result plist."
  (let ((user-config (lsp-coder-test--param :user_config)))
    (if user-config
        (progn
          (setq lsp-coder-command (lsp-coder-test--param :cmd)
                lsp-coder-initialization-options (lsp-coder-test--param :init_options)
                ;; A menu user: the suggestion comes through completion-at-point.
                lsp-coder-ghost-text nil)
          (load user-config nil t)
          (when (lsp-coder-test--param :beside)
            (setq lsp-coder-rass-program (lsp-coder-test--param :rass))
            (lsp-coder-eglot-beside 'python-mode (lsp-coder-test--param :beside))))
      (setq eglot-server-programs
            `((python-mode . (,@(lsp-coder-test--param :cmd)
                              :initializationOptions
                              ,(lsp-coder-test--param :init_options)))))))
  (setq eglot-sync-connect t
        eglot-connect-timeout (lsp-coder-test--param :load_timeout_s))
  (find-file (lsp-coder-test--param :file))
  (python-mode)
  ;; NOTE: `eglot-ensure' does not connect in batch mode; call `eglot' directly.
  (apply #'eglot (eglot--guess-contact))
  (let ((server (eglot-current-server)))
    (unless server
      (error "eglot did not connect to %S" (lsp-coder-test--param :cmd)))
    (let* ((stats (lsp-coder-test--wait-for-model server))
           (result (lsp-coder-test--complete server)))
      (prog1 (append (list :eglot_version (lsp-coder-test--eglot-version)
                           :capabilities (eglot--capabilities server)
                           :stats stats
                           :result result)
                     (when (lsp-coder-test--param :beside)
                       (list :capf (vconcat (lsp-coder-test--capf-candidates)))))
        (eglot-shutdown server)))))

(defun lsp-coder-test--request (server)
  "Ask SERVER for the completion at the test's position."
  (jsonrpc-request server :textDocument/completion
                   (list :textDocument (list :uri (eglot--path-to-uri buffer-file-name))
                         :position (list :line (lsp-coder-test--param :line)
                                         :character (lsp-coder-test--param :character))
                         :context '(:triggerKind 1))
                   :timeout (lsp-coder-test--param :request_timeout_s)))

(defun lsp-coder-test--complete-enough (result)
  "Whether the completion RESULT holds lsp-coder's item (and, beside a second server,
one of that server's)."
  (let ((items (if (vectorp result) result (plist-get result :items))))
    (and (seq-some (lambda (item) (equal (plist-get item :detail) "lsp-coder")) items)
         (or (not (lsp-coder-test--param :beside))
             (seq-some (lambda (item) (not (equal (plist-get item :detail) "lsp-coder")))
                       items)))))

(defun lsp-coder-test--complete (server)
  "The completion at the test's position: the first answer that holds lsp-coder's item
(and beside a second server, one of its items too).  An answer can come without it when
the server's hard budget for completions runs out on a busy machine (the generation goes
on into its suggestion cache, which answers the next request), and rass answers with what
came within its own time limit (the other server's first completion can take longer)."
  (let ((deadline (+ (float-time) (lsp-coder-test--param :load_timeout_s)))
        (result (lsp-coder-test--request server)))
    (while (not (lsp-coder-test--complete-enough result))
      (when (> (float-time) deadline)
        (error "No answer with the expected items: %S" result))
      ;; NOTE: rass does not cancel what it stopped waiting for: asking a busy server
      ;; again at once only queues more work for it.
      (accept-process-output nil (or (lsp-coder-test--param :retry_s) 0.2))
      (setq result (lsp-coder-test--request server)))
    result))

(defun lsp-coder-test--capf-candidates ()
  "What `completion-at-point' offers at the test's position, in eglot's display order."
  (goto-char (point-min))
  (forward-line (lsp-coder-test--param :line))
  (forward-char (lsp-coder-test--param :character))
  (pcase-let* ((`(,beg ,end ,table . ,_) (eglot-completion-at-point))
               (prefix (buffer-substring-no-properties beg end))
               (metadata (completion-metadata prefix table nil))
               (sort (completion-metadata-get metadata 'display-sort-function))
               (candidates (all-completions prefix table)))
    (mapcar #'substring-no-properties (if sort (funcall sort candidates) candidates))))

(lsp-coder-test--main #'lsp-coder-test--run)

;;; eglot_completion.el ends here
