;;; lsp_mode_completion.el --- lsp-mode client test for lsp-coder -*- lexical-binding: t -*-

;; Run with
;;   LSP_CODER_TEST_PARAMS=params.json emacs --batch -l lsp_mode_completion.el
;;
;; params.json: {cmd, init_options, file, line, character, load_timeout_s, out, user_config,
;;               beside, ghost}
;; Loads `user_config' (editors/emacs/lsp-coder-lsp-mode.el: lsp-coder as an add-on client),
;; registers `beside' (a second server's command) as the buffer's main lsp-mode client, opens
;; `file' in python-mode and runs `lsp': lsp-mode starts both servers.  Waits for lsp-coder's
;; model, then asks `completion-at-point' (lsp-mode's capf asks every server) until its
;; candidates hold items of both servers, and writes {servers, candidates, messages} (or
;; {error, messages}) as JSON to `out'; messages are the servers' window/logMessage and
;; window/showMessage texts.  With `ghost' true (lsp-coder-ghost-text), it types an edit at
;; the position instead, waits for the ghost text, presses TAB and writes {ghost_mode, ghost,
;; before, after, point}.

;;; Code:

(require 'package)
(package-initialize)
(load (expand-file-name "test_io.el" (file-name-directory load-file-name)) nil t)
(require 'seq)

(defun lsp-coder-test--wait (what predicate)
  "Wait until PREDICATE is true; error naming WHAT after the load timeout."
  (let ((deadline (+ (float-time) (lsp-coder-test--param :load_timeout_s))))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.1))))

(defun lsp-coder-test--workspace (server-id)
  "The buffer's lsp-mode workspace of SERVER-ID."
  (seq-find (lambda (w) (eq (lsp--client-server-id (lsp--workspace-client w)) server-id))
            (lsp-workspaces)))

(defun lsp-coder-test--stats ()
  "lsp-coder's lspCoder.stats.
Asked asynchronously: lsp-mode 8's `lsp-request' throws out of the process filter when its
answer arrives, dropping whatever else that read held after it (such as the log message
naming the loaded model)."
  (let (answer)
    (with-lsp-workspace (lsp-coder-test--workspace 'lsp-coder)
      (lsp-request-async "workspace/executeCommand" '(:command "lspCoder.stats" :arguments [])
                         (lambda (stats) (setq answer stats))
                         :error-handler (lambda (err) (setq answer (list :error err)))
                         :mode 'detached))
    (lsp-coder-test--wait "lspCoder.stats" (lambda () answer))
    (when (eq (car-safe answer) :error)
      (error "lspCoder.stats failed: %S" (cadr answer)))
    answer))

(defun lsp-coder-test--model-loaded ()
  "Whether lsp-coder's model has loaded (its lspCoder.stats)."
  (let* ((stats (lsp-coder-test--stats))
         (totals (gethash "totals" stats)))
    (when-let ((err (gethash "error" totals)))
      (error "The model failed to load: %s" err))
    (eq (gethash "model_loaded" totals) t)))

(defun lsp-coder-test--candidates ()
  "What `completion-at-point' offers at the test's position, in lsp-mode's order."
  (goto-char (point-min))
  (forward-line (lsp-coder-test--param :line))
  (forward-char (lsp-coder-test--param :character))
  (pcase-let* ((`(,beg ,end ,table . ,_) (lsp-completion-at-point))
               (prefix (buffer-substring-no-properties beg end))
               (metadata (completion-metadata prefix table nil))
               (sort (completion-metadata-get metadata 'display-sort-function))
               (candidates (all-completions prefix table)))
    (mapcar (lambda (c)
              (list :label (substring-no-properties c)
                    :server (if (equal (lsp:completion-item-detail?
                                        (get-text-property 0 'lsp-completion-item c))
                                       "lsp-coder")
                                "lsp-coder" "other")))
            (if sort (funcall sort candidates) candidates))))

(defun lsp-coder-test--from-both (candidates)
  "Whether CANDIDATES hold items of lsp-coder and of the other server."
  (and (seq-some (lambda (c) (equal (plist-get c :server) "lsp-coder")) candidates)
       (seq-some (lambda (c) (equal (plist-get c :server) "other")) candidates)))

(defun lsp-coder-test--run ()
  "Start both servers, wait for the model, complete; return the result plist."
  (require 'lsp-mode)
  (setq lsp-coder-command (lsp-coder-test--param :cmd)
        lsp-coder-initialization-options (lsp-coder-test--param :init_options)
        lsp-coder-ghost-text (eq (lsp-coder-test--param :ghost) t))
  (load (lsp-coder-test--param :user_config) nil t)
  (lsp-register-client
   (make-lsp-client :new-connection (lsp-stdio-connection (lsp-coder-test--param :beside))
                    :major-modes '(python-mode)
                    :server-id 'user-server))
  (setq lsp-enabled-clients '(user-server lsp-coder)
        lsp-auto-guess-root nil
        lsp-restart 'ignore
        lsp-enable-snippet nil
        lsp-keep-workspace-alive nil
        lsp-session-file (expand-file-name "lsp-session" (getenv "HOME")))
  (dolist (handler '(lsp--window-log-message lsp--window-show-message))
    (advice-add handler :before
                (lambda (_workspace params)
                  (push (lsp:message-params-message params) lsp-coder-test--messages))))
  (lsp-workspace-folders-add
   (directory-file-name (file-name-directory (lsp-coder-test--param :file))))
  (find-file (lsp-coder-test--param :file))
  (python-mode)
  (lsp)
  (lsp-coder-test--wait "both servers"
                        (lambda () (and (lsp-coder-test--workspace 'lsp-coder)
                                        (lsp-coder-test--workspace 'user-server)
                                        (seq-every-p (lambda (w) (eq (lsp--workspace-status w)
                                                                     'initialized))
                                                     (lsp-workspaces)))))
  (lsp-coder-test--wait "lsp-coder's model" #'lsp-coder-test--model-loaded)
  (if (eq (lsp-coder-test--param :ghost) t)
      (lsp-coder-test--ghost-text)
    (lsp-coder-test--menu)))

(defun lsp-coder-test--ghost-text ()
  "At the test's position, type an edit, wait for the ghost text and accept it with TAB."
  (goto-char (point-min))
  (forward-line (lsp-coder-test--param :line))
  (forward-char (lsp-coder-test--param :character))
  (execute-kbd-macro (kbd "SPC DEL"))
  (let* ((before (buffer-string))
         (at (point))
         (shown (lambda ()
                  (when-let ((overlay (seq-find (lambda (o) (overlay-get o 'lsp-coder-ghost))
                                                (overlays-in (point) (point)))))
                    (substring-no-properties (overlay-get overlay 'after-string)))))
         (ghost (progn (lsp-coder-test--wait "the ghost text" shown)
                       (funcall shown))))
    (execute-kbd-macro (kbd "TAB"))
    (prog1 (list :ghost_mode lsp-coder-ghost-mode :ghost ghost :before before
                 :after (buffer-string) :point (1- at))
      (ignore-errors (lsp-workspace-shutdown (lsp-coder-test--workspace 'lsp-coder))))))

(defun lsp-coder-test--menu ()
  "Ask `completion-at-point' until it offers both servers' items; the result plist."
  (let (candidates)
    (lsp-coder-test--wait "candidates of both servers"
                          (lambda () (lsp-coder-test--from-both
                                      (setq candidates (lsp-coder-test--candidates)))))
    (prog1 (list :servers (vconcat (mapcar (lambda (w) (symbol-name (lsp--client-server-id
                                                                      (lsp--workspace-client w))))
                                           (lsp-workspaces)))
                 :candidates (vconcat candidates))
      (ignore-errors (lsp-workspace-shutdown (lsp-coder-test--workspace 'lsp-coder))))))

(lsp-coder-test--main #'lsp-coder-test--run)

;;; lsp_mode_completion.el ends here
