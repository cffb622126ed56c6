;;; eglot_completion.el --- eglot client test for lsp-coder -*- lexical-binding: t -*-

;; Run with
;;   LSP_CODER_TEST_PARAMS=params.json emacs --batch -l eglot_completion.el
;;
;; params.json: {cmd, init_options, file, line, character, load_timeout_s,
;;               request_timeout_s, out, user_config}
;; With `user_config' (a path to editors/emacs/lsp-coder.el) the server entry comes from
;; that file; otherwise the script puts its own entry in `eglot-server-programs'.
;; Connects eglot to the server for a python-mode buffer visiting `file', waits for the model
;; (`lspCoder.stats'), asks for textDocument/completion and writes
;; {eglot_version, capabilities, stats, result, messages} (or {error, messages}) as JSON
;; to `out'; messages are the server's window/logMessage and window/showMessage texts.

;;; Code:

(load (expand-file-name "load_eglot.el" (file-name-directory load-file-name)) nil t)
(require 'json)

(defvar lsp-coder-test--params
  (with-temp-buffer
    (insert-file-contents (getenv "LSP_CODER_TEST_PARAMS"))
    (json-parse-buffer :object-type 'plist :array-type 'list)))

(defun lsp-coder-test--param (key)
  "The test parameter KEY (a keyword)."
  (plist-get lsp-coder-test--params key))

(defvar lsp-coder-test--messages nil
  "The server's log and show messages, newest first.")

(defun lsp-coder-test--note (_server method &rest params)
  "Record the message of a window/logMessage or window/showMessage METHOD with PARAMS."
  (when (memq method '(window/logMessage window/showMessage))
    (push (plist-get params :message) lsp-coder-test--messages)))

(advice-add 'eglot-handle-notification :before #'lsp-coder-test--note)

(defun lsp-coder-test--write (result)
  "Write the plist RESULT and the server's messages as JSON to the output file."
  (with-temp-file (lsp-coder-test--param :out)
    (insert (json-serialize
             (append result
                     (list :messages (vconcat (reverse lsp-coder-test--messages))))
             :null-object nil :false-object :json-false))))

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
                lsp-coder-initialization-options (lsp-coder-test--param :init_options))
          (load user-config nil t))
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
           (result (jsonrpc-request
                    server :textDocument/completion
                    (list :textDocument (list :uri (eglot--path-to-uri buffer-file-name))
                          :position (list :line (lsp-coder-test--param :line)
                                          :character (lsp-coder-test--param :character))
                          :context '(:triggerKind 1))
                    :timeout (lsp-coder-test--param :request_timeout_s))))
      (prog1 (list :eglot_version (lsp-coder-test--eglot-version)
                   :capabilities (eglot--capabilities server)
                   :stats stats
                   :result result)
        (eglot-shutdown server)))))

(condition-case err
    (progn
      (lsp-coder-test--write (lsp-coder-test--run))
      (kill-emacs 0))
  (error
   (lsp-coder-test--write (list :error (error-message-string err)))
   (kill-emacs 1)))

;;; eglot_completion.el ends here
