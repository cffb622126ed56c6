;;; test_io.el --- what every Emacs client test of lsp-coder reads and writes -*- lexical-binding: t -*-

;; The test's parameters come as JSON in the file `LSP_CODER_TEST_PARAMS' names; the result goes
;; as JSON to its `out', with the servers' messages (each client script records them in
;; `lsp-coder-test--messages').

;;; Code:

(require 'json)

(defvar lsp-coder-test--params
  (with-temp-buffer
    (insert-file-contents (getenv "LSP_CODER_TEST_PARAMS"))
    (json-parse-buffer :object-type 'plist :array-type 'list)))

(defun lsp-coder-test--param (key)
  "The test parameter KEY (a keyword)."
  (plist-get lsp-coder-test--params key))

(defvar lsp-coder-test--messages nil
  "The servers' log and show messages, newest first.")

(defun lsp-coder-test--write (result)
  "Write the plist RESULT and the servers' messages as JSON to the output file."
  (with-temp-file (lsp-coder-test--param :out)
    (insert (json-serialize
             (append result
                     (list :messages (vconcat (reverse lsp-coder-test--messages))))
             :null-object nil :false-object :json-false))))

(defun lsp-coder-test--main (run)
  "Call RUN, write its plist (or the error) as the result, and exit 0 (or 1)."
  (condition-case err
      (progn
        (lsp-coder-test--write (funcall run))
        (kill-emacs 0))
    (error
     (lsp-coder-test--write (list :error (error-message-string err)))
     (kill-emacs 1))))

;;; test_io.el ends here
